# Slack: an incoming webhook's message, a section block per event.
# Its documentation: https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks/
# content-type: application/json
# max-batch: 50
def esc: gsub("&"; "&amp;") | gsub("<"; "&lt;") | gsub(">"; "&gt;");
{text: (map(title | esc) | join("\n"))[0:3000],
 blocks: map({type: "section", text: {type: "mrkdwn",
   text: ("*" + (title | esc) + "*" + (detail | if . == "" then "" else "\n" + esc end))[0:3000]}})}
