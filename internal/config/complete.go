package config

// These helpers expose the --sink syntax's vocabulary for shell completion, so that it
// follows the parser instead of repeating its lists.

// Kinds lists the sink kinds: terminal, file, jq.
func Kinds() []string {
	return append([]string(nil), kinds...)
}

// OptionKeys lists the --sink option keys a sink of kind takes, in the order messages
// list them; nil for an unknown kind.
func OptionKeys(kind string) []string {
	return flagKeys(kind)
}

// BareOption reports whether a --sink option may be given without a value (raw, compress).
func BareOption(key string) bool {
	s, ok := flagSetting(key)
	return ok && s.bool
}

// FileFormats lists the formats a file sink can be written in, the default first.
func FileFormats() []string {
	names := make([]string, len(fileFormats))
	for i, f := range fileFormats {
		names[i] = string(f)
	}
	return names
}
