"""The Slack side of Countersign: Block Kit rendering, listeners and the bot."""
