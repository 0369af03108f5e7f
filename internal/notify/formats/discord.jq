# Discord: a webhook's message, an embed per event.
# Its documentation: https://discord.com/developers/docs/resources/webhook#execute-webhook; 10 embeds a message, of 6000
# characters in all (https://discord.com/developers/docs/resources/message#embed-object-embed-limits).
# An episode's first message is posted with ?wait=true, which gives its id, and edited in place as the episode goes
# on and when it is resolved (https://discord.com/developers/docs/resources/webhook#edit-webhook-message).
# edit: discord
# content-type: application/json
# max-batch: 10
# max-chars: 6000
{username: "kubeevents",
 embeds: map({title: (title | cut(256)),
   description: ((detail | if . == "" then "no details" else . end | cut(300))
     + (context_text | if . == "" then "" else "\n```\n" + (gsub("`"; "'") | tail(3700)) + "\n```" end)),
   timestamp: .time,
   color: (if problem then 15548997 elif resolved or .rollout.state == "complete" or (.on // [] | index("ready")) then 5763719 else 16705372 end)})}
