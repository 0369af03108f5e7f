# Discord: a webhook's message, an embed per event.
# Its documentation: https://discord.com/developers/docs/resources/webhook#execute-webhook
# content-type: application/json
# max-batch: 10
{username: "kubeevents",
 embeds: map({title: title[0:256], description: (detail | if . == "" then "no details" else . end)[0:300], timestamp: .time,
   color: (if problem then 15548997 elif .rollout.state == "complete" or (.on // [] | index("ready")) then 5763719 else 16705372 end)})}
