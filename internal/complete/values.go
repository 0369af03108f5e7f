package complete

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/kubectl"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// Descriptions shown next to flag values; a value without one is offered bare.
var (
	FormatDescriptions = map[string]string{
		string(render.FormatPretty): "one aligned line per event, with what changed",
		string(render.FormatWide):   "pretty with kubectl's -o wide columns",
		"custom-columns=":           "kubectl's custom columns, as get -w prints them: HEADER:.path,...",
		"custom-columns-file=":      "custom columns from a file: a line of headers, a line of paths",
		"jsonpath=":                 "kubectl's JSONPath template per event, its output alone",
		"jsonpath-file=":            "a JSONPath template from a file",
		"go-template=":              "a Go template per event, its output alone (--output-watch-events: {type, object})",
		"go-template-file=":         "a Go template from a file",
		string(render.FormatJSON):   "JSON Lines: one object per event",
		string(render.FormatYAML):   "one YAML document per event",
		string(render.FormatName):   "TYPE kind/name, as kubectl get -o name",
	}
	policyDescriptions = map[string]string{
		listener.Block.String():      "wait for room: lossless, may hold up this sink's informer handler",
		listener.DropOldest.String(): "drop the oldest queued event: the sink stays current",
		listener.DropNewest.String(): "drop the incoming event: keep what is queued",
		listener.Coalesce.String():   "merge events for the same object: every final state arrives",
	}
	colorValues       = []string{"auto", "always", "never"}
	colorDescriptions = map[string]string{
		"auto":   "only when stdout is a terminal and NO_COLOR is unset",
		"always": "always colour",
		"never":  "never colour",
	}
)

// withDescriptions offers the values starting with toComplete (after prefix), each with
// its description.
func withDescriptions(prefix string, values []string, descriptions map[string]string, toComplete string) []cobra.Completion {
	var comps []cobra.Completion
	for _, v := range values {
		if strings.HasPrefix(prefix+v, toComplete) {
			comps = append(comps, cobra.CompletionWithDesc(prefix+v, descriptions[v]))
		}
	}
	return comps
}

func Formats(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if kubectl.IsTemplateFormat(toComplete) {
		return nil, NoFiles // the template itself: nothing to offer
	}
	formats := append(render.Formats(), kubectl.TemplateFormats()...)
	out := withDescriptions("", formats, FormatDescriptions, toComplete)
	for _, c := range out {
		if !strings.Contains(string(c), "=") {
			return out, NoFiles
		}
	}
	// Only templates left: the shell must not end the word after their "=".
	return out, NoFiles | cobra.ShellCompDirectiveNoSpace
}

func OnFull(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return withDescriptions("", listener.Policies(), policyDescriptions, toComplete), NoFiles
}

func Color(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return withDescriptions("", colorValues, colorDescriptions, toComplete), NoFiles
}

// Sink completes a --sink value, KIND[(OPTIONS)][=TARGET], step by step: the
// kind, then the option keys of that kind and the values of format, on-full, raw and
// compress, then a terminal's format.
func Sink(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	partial := cobra.ShellCompDirectiveNoSpace | NoFiles
	i := strings.IndexAny(toComplete, "(=")
	if i < 0 {
		var comps []cobra.Completion
		for _, kind := range sinkkind.Kinds() {
			name, desc := kind.Name, kind.Description
			forms := []cobra.Completion{
				cobra.CompletionWithDesc(name+"=", desc+kind.TargetHint),
				cobra.CompletionWithDesc(name+"(", desc+", with options"),
			}
			if kind.OptionalTarget {
				forms = append([]cobra.Completion{cobra.CompletionWithDesc(name, desc+", in the -o format")}, forms...)
			}
			for _, f := range forms {
				if strings.HasPrefix(f, toComplete) {
					comps = append(comps, f)
				}
			}
		}
		return comps, partial
	}
	kindName := toComplete[:i]
	kind, ok := sinkkind.Lookup(kindName)
	if !ok {
		return nil, NoFiles
	}
	target := kind.TargetRow().Value
	if toComplete[i] == '=' {
		switch {
		case target == sinkkind.Format:
			return withDescriptions(toComplete[:i+1], kind.Formats, FormatDescriptions, toComplete), NoFiles
		case target == sinkkind.Path:
			return pathCompletions(toComplete[:i+1], toComplete[i+1:])
		}
		return nil, NoFiles // a jq expression
	}
	// Inside or after the option list.
	rest := toComplete[i+1:]
	closeAt, segStart := optionListEnd(rest)
	if closeAt >= 0 {
		if closeAt == len(rest)-1 && kind.AfterOptions != "" {
			return []cobra.Completion{cobra.CompletionWithDesc(toComplete+"=", kind.AfterOptions)}, partial
		}
		if at := i + 1 + closeAt + 1; target == sinkkind.Path && at < len(toComplete) && toComplete[at] == '=' {
			return pathCompletions(toComplete[:at+1], toComplete[at+1:])
		}
		return nil, NoFiles // complete, or a jq expression
	}
	base := toComplete[:i+1+segStart]
	seg := rest[segStart:]
	if eq := strings.IndexByte(seg, '='); eq >= 0 {
		key := seg[:eq]
		base += key + "="
		values, isPath := kind.OptionValues(key)
		if isPath && !strings.Contains(seg[eq+1:], `"`) {
			comps, directive := pathCompletions(base, seg[eq+1:])
			return comps, directive | cobra.ShellCompDirectiveNoSpace // the option list goes on
		}
		// Formats and policies are described; true and false need no words.
		descriptions := map[string]string{}
		maps.Copy(descriptions, FormatDescriptions)
		maps.Copy(descriptions, policyDescriptions)
		return withDescriptions(base, values, descriptions, toComplete), partial
	}
	used := map[string]bool{}
	for _, opt := range strings.Split(rest[:segStart], ",") {
		used[strings.TrimSpace(strings.SplitN(opt, "=", 2)[0])] = true
	}
	var comps []cobra.Completion
	for _, key := range kind.FlagKeys() {
		if used[key] {
			continue
		}
		form := key + "="
		set, _ := kind.Row(key)
		if set.Value == sinkkind.Bool {
			form = key
		}
		if strings.HasPrefix(base+form, toComplete) {
			comps = append(comps, cobra.CompletionWithDesc(base+form, set.Help))
		}
	}
	return comps, partial
}

// pathCompletions offers the files and directories whose path starts with partial, each
// after prefix ("file=", "jq(output="): the shell cannot complete these paths itself,
// since the word starts with the sink's kind. A directory ends in "/" and keeps the
// cursor after it; dot files only once a "." is typed, as in the shells.
func pathCompletions(prefix, partial string) ([]cobra.Completion, cobra.ShellCompDirective) {
	dir, base := filepath.Split(partial)
	readDir := dir
	if readDir == "" {
		readDir = "."
	}
	entries, err := os.ReadDir(readDir)
	if err != nil {
		return nil, NoFiles
	}
	var comps []cobra.Completion
	directive := NoFiles
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		comp := prefix + dir + name
		if info, err := os.Stat(filepath.Join(readDir, name)); err == nil && info.IsDir() {
			comp += "/"
			directive |= cobra.ShellCompDirectiveNoSpace
		}
		comps = append(comps, comp)
	}
	return comps, directive
}

// optionListEnd scans an option list (what follows '(') the way the --sink parser does:
// closeAt is the index of its closing ')' (-1 if still open), segStart where the option
// being typed starts.
func optionListEnd(s string) (closeAt, segStart int) {
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == ',':
			segStart = i + 1
		case c == ')':
			return i, segStart
		}
	}
	return -1, segStart
}

// EventTypes completes --event-types' comma-separated list: the last element,
// keeping what is before it.
func EventTypes(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done = toComplete[:i+1]
	}
	var out []string
	for _, t := range []event.EventType{event.Added, event.Modified, event.Deleted, event.Sync} {
		if strings.HasPrefix(done+string(t), strings.ToUpper(toComplete)) && !strings.Contains(strings.ToUpper(done), string(t)+",") {
			out = append(out, done+string(t))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// Transitions completes --on's comma-separated list with the shipped transitions' names,
// with what each says.
func Transitions(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done = toComplete[:i+1]
	}
	var out []string
	for _, t := range transition.Shipped().List() {
		if strings.HasPrefix(done+t.Name, toComplete) && !slices.Contains(strings.Split(done, ","), t.Name) {
			out = append(out, done+t.Name+"\t"+t.Description)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
