package config

import (
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// These helpers expose the --sink syntax's vocabulary for shell completion, so that it
// follows the kinds and the settings table instead of repeating their lists.

// Kinds lists the sink kinds: terminal, file, jq.
func Kinds() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Name
	}
	return names
}

// OptionKeys lists the --sink option keys a sink of kind takes, in the order messages
// list them; nil for an unknown kind.
func OptionKeys(kind string) []string {
	return flagKeys(kind)
}

// BareOption reports whether a --sink option may be given without a value (raw, compress).
func BareOption(key string) bool {
	s, ok := flagSetting(key)
	return ok && s.value == boolValue
}

// OptionHelp describes a --sink option, for completion.
func OptionHelp(key string) string {
	s, _ := flagSetting(key)
	return s.help
}

// OptionValues lists the values a --sink option of a kind takes, for completion: the
// kind's formats, the on-full policies, true and false; path reports an option whose
// value is a file's path.
func OptionValues(kind, key string) (values []string, path bool) {
	s, ok := flagSetting(key)
	k, known := LookupKind(kind)
	if !ok || !known || !k.takes(s) {
		return nil, false
	}
	switch s.value {
	case formatValue:
		return k.Formats(), false
	case policyValue:
		return listener.Policies(), false
	case boolValue:
		return []string{"true", "false"}, false
	case eventTypesValue:
		return EventTypeNames, false
	case transitionsValue:
		return transition.Shipped().Names(), false
	case pathValue:
		return nil, true
	}
	return nil, false
}

// FileFormats lists the formats a file sink can be written in, the default first.
func FileFormats() []string {
	k, _ := LookupKind(KindFile)
	return k.Formats()
}
