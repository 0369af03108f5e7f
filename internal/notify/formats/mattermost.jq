# Mattermost: an incoming webhook's post, a Markdown line per event.
# Its documentation: https://developers.mattermost.com/integrate/webhooks/incoming/
# content-type: application/json
# max-batch: 50
{username: "kubeevents",
 text: (map("**\(title)**" + (detail | if . == "" then "" else ": " + . end)) | join("\n"))[0:16383]}
