package plan

import (
	"path"
	"slices"
	"strings"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/suggest"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

var usagef = diag.Usagef

// selectContexts reads --context and --all-contexts: the contexts to watch, or nil for
// the kubeconfig's current one as kubectl's flags override it. A comma list and globs
// pick contexts by name; one plain name must be a context of the kubeconfig.
func selectContexts(kc Kubeconfig, req Request) ([]string, error) {
	if req.Context == "" && !req.AllContexts {
		return nil, nil
	}
	raw, err := kc.Default.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		if !severalContexts(req.Context, req.AllContexts) {
			return nil, nil // client-go says what is wrong with the kubeconfig, as kubectl does
		}
		return nil, KubeconfigError(err)
	}
	contexts := make([]string, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		contexts = append(contexts, name)
	}
	picked, err := pickContexts(req.Context, req.AllContexts, contexts)
	if err != nil {
		return nil, err
	}
	return picked, nil
}

// severalContexts reports whether --context (or --all-contexts) may name more than one
// context by its form: a comma list or a glob.
func severalContexts(spec string, all bool) bool {
	return all || strings.Contains(spec, ",") || isPattern(spec)
}

// isPattern reports whether s is a glob rather than a name.
func isPattern(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// matchName reports whether name matches the glob pattern as a whole string: unlike
// path.Match, '*' and '?' match '/' too, since context names are not paths (EKS's are
// ARNs: arn:aws:eks:eu-west-1:123456789012:cluster/prod-eu-one).
func matchName(pattern, name string) (bool, error) {
	const slash = "\x00" // a byte no context name holds, which path.Match treats as any other
	return path.Match(strings.ReplaceAll(pattern, "/", slash), strings.ReplaceAll(name, "/", slash))
}

// pickContexts picks the contexts that spec names: a comma list of names and globs, in
// the order given, each once; all takes every context, in name order. A name that is
// not a context, or a glob that matches none, is a usage error naming the contexts
// there are.
func pickContexts(spec string, all bool, contexts []string) ([]string, error) {
	names := slices.Sorted(slices.Values(contexts))
	known := strings.Join(names, ", ")
	if len(names) == 0 {
		known = "none"
	}
	if all {
		if spec != "" {
			return nil, usagef("--all-contexts and --context %q do not go together; drop one", spec)
		}
		if len(names) == 0 {
			return nil, usagef("--all-contexts: the kubeconfig has no contexts (check --kubeconfig and $KUBECONFIG)")
		}
		return names, nil
	}
	var picked []string
	add := func(name string) {
		if !slices.Contains(picked, name) {
			picked = append(picked, name)
		}
	}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			continue
		case isPattern(item):
			if _, err := matchName(item, ""); err != nil {
				return nil, usagef("--context %q: %q is not a valid glob (%v)", spec, item, err)
			}
			matched := false
			for _, name := range names {
				if ok, _ := matchName(item, name); ok {
					add(name)
					matched = true
				}
			}
			if !matched {
				return nil, usagef("--context %q: %q matches none of the kubeconfig's contexts (%s)", spec, item, known)
			}
		case slices.Contains(names, item):
			add(item)
		default:
			return nil, usagef("--context %q: no context %q in the kubeconfig%s; the contexts are: %s", spec, item, suggest.DidYouMean(item, names), known)
		}
	}
	if len(picked) == 0 {
		return nil, usagef("--context %q names no context; give NAME[,NAME...] or a glob such as 'prod-*' (contexts: %s)", spec, known)
	}
	return picked, nil
}

// FirstContext is the first of the contexts that a --context of several (a comma list,
// globs) picks from getter's kubeconfig, for what asks only one cluster (completion);
// spec itself when it names one context or none, or picks none.
func FirstContext(getter genericclioptions.RESTClientGetter, spec string) string {
	if !severalContexts(spec, false) {
		return spec
	}
	raw, err := getter.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return spec
	}
	var names []string
	for name := range raw.Contexts {
		names = append(names, name)
	}
	if picked, err := pickContexts(spec, false, names); err == nil {
		return picked[0]
	}
	return spec
}
