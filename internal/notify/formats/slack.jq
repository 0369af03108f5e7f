# Slack: an incoming webhook's message, a section block per event.
# Its documentation: https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks/; its limits: 50 blocks
# (https://docs.slack.dev/reference/block-kit/blocks/), 3000 characters a section
# (https://docs.slack.dev/reference/block-kit/blocks/section-block/), a message cut past 40,000 characters, incoming
# webhooks' too (https://api.slack.com/changelog/2018-04-truncating-really-long-messages).
# content-type: application/json
# max-batch: 50
# max-chars: 40000
def esc: gsub("&"; "&amp;") | gsub("<"; "&lt;") | gsub(">"; "&gt;");
{text: (map(title | esc) | join("\n") | cut(3000)),
 blocks: map({type: "section", text: {type: "mrkdwn",
   text: ("*" + (title | esc) + "*" + (detail | if . == "" then "" else "\n" + esc end) | cut(3000))}})}
