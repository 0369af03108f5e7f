package diag

// Color decides colour for one output stream, as --color says (auto, always, never):
// with auto, only on a terminal, and never with NO_COLOR set or TERM=dumb. Never a
// global switch, since stdout and stderr may differ (stdout piped, stderr a terminal).
func Color(mode string, terminal bool, lookupEnv func(string) (string, bool)) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if lookupEnv != nil {
		if _, ok := lookupEnv("NO_COLOR"); ok {
			return false
		}
		if term, _ := lookupEnv("TERM"); term == "dumb" {
			return false
		}
	}
	return terminal
}
