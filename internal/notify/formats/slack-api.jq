# Slack through its Web API with a bot token (chat.postMessage, chat.update): a message, a section block per event (and one for a crash's context).
# POST to https://slack.com/api/chat.postMessage?channel=CHANNEL with header="Authorization=file:PATH" (PATH holding
# "Bearer xoxb-..."); kubeevents adds the channel, and the message's ts to an update.
# Its documentation: https://docs.slack.dev/reference/methods/chat.postMessage and
# https://docs.slack.dev/reference/methods/chat.update; its limits: 50 blocks
# (https://docs.slack.dev/reference/block-kit/blocks/), 3000 characters a section
# (https://docs.slack.dev/reference/block-kit/blocks/section-block/), a message cut past 40,000 characters, incoming
# webhooks' too (https://api.slack.com/changelog/2018-04-truncating-really-long-messages).
# An episode's first message is updated in place as it goes on and when it is resolved (chat.update), and each
# update and the resolution are replies in its thread (thread_ts).
# edit: slack
# content-type: application/json; charset=utf-8
# max-batch: 25
# max-chars: 40000
def esc: gsub("&"; "&amp;") | gsub("<"; "&lt;") | gsub(">"; "&gt;");
{text: (map(title | esc) | join("\n") | cut(3000)),
 blocks: [.[] |
   {type: "section", text: {type: "mrkdwn",
     text: ("*" + (title | esc) + "*" + (detail | if . == "" then "" else "\n" + esc end) | cut(3000))}},
   (context_text | if . == "" then empty else
     {type: "section", text: {type: "mrkdwn", text: ("```" + (esc | tail(2990)) + "```")}} end)]}
