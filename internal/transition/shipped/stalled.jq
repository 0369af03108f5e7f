# An object stayed InProgress for --stalled-after without progress (a STALLED event: no change of its health's status or message in that time).
.type == "STALLED"
