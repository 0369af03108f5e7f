# The object was deleted (not one that only left the -l selection).
.type == "DELETED" and .reason != "selector"
