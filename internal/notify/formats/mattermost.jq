# Mattermost: an incoming webhook's post, a Markdown line per event.
# Its documentation: https://developers.mattermost.com/integrate/webhooks/incoming/: a post holds 16383 characters,
# longer text is split into several posts wherever the limit falls.
# content-type: application/json
# max-batch: 50
# max-chars: 16383
{username: "kubeevents",
 text: (map("**\(title)**" + (detail | if . == "" then "" else ": " + . end)) | join("\n") | cut(16383))}
