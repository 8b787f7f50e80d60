#!/bin/sh
# The LangGraph / LangChain / Slack version matrix: the lab regressions, the attached-graph
# tests, the served graphs' and the Slack bot's at the lowest and the highest versions
# pyproject.toml allows, each end in a virtualenv of its own
# (.venv-lowest, .venv-highest; git-ignored, reused when present). Run from the repository root:
#   sh tests/version_matrix.sh            # both ends
#   sh tests/version_matrix.sh lowest     # one end (.ci/run runs this one: the README's test
#                                         # command already tests what the index resolves)
set -eu
# langgraph 1.2.12 allows langgraph-prebuilt 1.1.0, whose ToolNode the tool guard composes into
LOWEST="langgraph==1.2.12 langgraph-prebuilt==1.1.0 langgraph-checkpoint==4.3.2 \
langgraph-checkpoint-sqlite==3.1.2 langgraph-checkpoint-postgres==3.2.0 langchain-core==1.8.3 \
langchain==1.5.0 slack-bolt==1.29.0 slack-sdk==3.42.0"
TESTS="tests/runtime/test_lab_regressions.py tests/langgraph tests/runtime/test_attached_tools.py \
tests/runtime/test_results_ride.py \
tests/runtime/test_instances.py::test_recovery_continues_a_pass_killed_after_its_tool_returned \
tests/slack/test_attached_graph.py tests/slack/test_render_allowed.py tests/cli/test_langgraph_desk.py \
tests/web/test_attached_graph.py tests/served tests/slack"
ENDS="${*:-lowest highest}"
for end in $ENDS; do
    venv=".venv-$end"
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    if [ "$end" = lowest ]; then
        # one resolution: the project with the lowest ends pinned
        # shellcheck disable=SC2086
        "$venv/bin/pip" install -q -e '.[dev]' $LOWEST
    elif [ "$end" = highest ]; then
        "$venv/bin/pip" install -q --upgrade --upgrade-strategy eager -e '.[dev]'
    else
        echo "version_matrix.sh: unknown end '$end' (lowest or highest)" >&2
        exit 2
    fi
    "$venv/bin/pip" list 2>/dev/null | grep -Ei '^(langgraph|langchain)' | sed "s/^/[$end] /"
    # shellcheck disable=SC2086
    "$venv/bin/python" -m pytest -q -p no:cacheprovider -n 3 $TESTS
done
