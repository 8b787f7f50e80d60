#!/bin/sh
# The LangGraph / LangChain version matrix: the lab regressions and the attached-graph tests at
# the lowest and the highest versions pyproject.toml allows. Not part of the default test
# command (it builds two virtualenvs): run it from the repository root when a range changes.
#   sh tests/version_matrix.sh
set -eu
LOWEST="langgraph==1.2.12 langgraph-checkpoint==4.3.2 langgraph-checkpoint-sqlite==3.1.2 \
langgraph-checkpoint-postgres==3.2.0 langchain-core==1.8.3 langchain==1.5.0"
TESTS="tests/runtime/test_lab_regressions.py tests/langgraph tests/slack/test_attached_graph.py \
tests/slack/test_render_allowed.py tests/cli/test_langgraph_desk.py"
for end in lowest highest; do
    venv=".venv-matrix-$end"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q -e '.[dev]'
    if [ "$end" = lowest ]; then
        # shellcheck disable=SC2086
        "$venv/bin/pip" install -q $LOWEST
    else
        "$venv/bin/pip" install -q --upgrade --upgrade-strategy eager -e '.[dev]'
    fi
    "$venv/bin/pip" list 2>/dev/null | grep -Ei '^(langgraph|langchain)' | sed "s/^/[$end] /"
    # shellcheck disable=SC2086
    "$venv/bin/python" -m pytest -q -p no:cacheprovider $TESTS
done
