# Microsoft Teams: an Adaptive Card, a title and facts per event (and a crash's context in monospace).
# Its documentation: https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using;
# a message holds 28 KB (https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook).
# A workflow's message cannot be edited: an episode's update or resolution is a message of its own that names the first.
# content-type: application/json
# max-batch: 20
# max-bytes: 28000
{type: "message",
 attachments: [{contentType: "application/vnd.microsoft.card.adaptive", contentUrl: null,
   content: {"$schema": "http://adaptivecards.io/schemas/adaptive-card.json", type: "AdaptiveCard", version: "1.4",
     body: [.[] |
       {type: "TextBlock", text: title, weight: "Bolder", wrap: true, color: (if problem then "Attention" elif resolved then "Good" else "Default" end)},
       {type: "FactSet", facts: ([{title: "Event", value: .type}, {title: "Time", value: .time}]
         + (detail | if . == "" then [] else [{title: "State", value: .}] end))},
       (context_text | if . == "" then empty else {type: "TextBlock", text: tail(8000), fontType: "Monospace", wrap: true, size: "Small"} end)]}}]}
