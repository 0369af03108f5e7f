# Slack: an incoming webhook's message, a section block per event (and one for a crash's context).
# Its documentation: https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks/; its limits: 50 blocks
# (https://docs.slack.dev/reference/block-kit/blocks/), 3000 characters a section
# (https://docs.slack.dev/reference/block-kit/blocks/section-block/), a message cut past 40,000 characters, incoming
# webhooks' too (https://api.slack.com/changelog/2018-04-truncating-really-long-messages).
# A webhook's message cannot be edited: an episode's update or resolution is a message of its own that names the first.
# content-type: application/json
# max-batch: 25
# max-chars: 40000
def esc: gsub("&"; "&amp;") | gsub("<"; "&lt;") | gsub(">"; "&gt;");
{text: (map(title | esc) | join("\n") | cut(3000)),
 blocks: [.[] |
   {type: "section", text: {type: "mrkdwn",
     text: ("*" + (title | esc) + "*" + (detail | if . == "" then "" else "\n" + esc end) | cut(3000))}},
   (context_text | if . == "" then empty else
     {type: "section", text: {type: "mrkdwn", text: ("```" + (esc | tail(2990)) + "```")}} end)]}
