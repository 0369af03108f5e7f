# Mattermost: an incoming webhook's post, a Markdown line per event (and a crash's context in a code block).
# Its documentation: https://developers.mattermost.com/integrate/webhooks/incoming/: a post holds 16383 characters,
# longer text is split into several posts wherever the limit falls.
# A post cannot be edited through a webhook: an episode's update or resolution is a post of its own that names the first.
# content-type: application/json
# max-batch: 50
# max-chars: 16383
{username: "kubeevents",
 text: (map("**\(title)**" + (detail | if . == "" then "" else ": " + . end)
   + (context_text | if . == "" then "" else "\n```\n" + (gsub("`"; "'") | tail(4000)) + "\n```" end)) | join("\n") | cut(16383))}
