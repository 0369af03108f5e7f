// Command gendocs writes the parts of the docs that the code describes: the sink kinds
// and settings tables of docs/sinks.md, from the sink kinds' rows (hack/sinkdoc), and
// docs/flags.md, from the commands' flags. Run it as make docs (or go generate
// ./internal/config for docs/sinks.md alone); internal/config's
// TestDocsMatchTheSettingsTable and cmd's TestFlagsDocIsCurrent fail when a file is not
// what it would write.
package main

import (
	"fmt"
	"os"

	"github.com/kubeevents/kubeevents/cmd"
	"github.com/kubeevents/kubeevents/hack/sinkdoc"
	_ "github.com/kubeevents/kubeevents/internal/sinkkind/kinds" // every sink kind
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "flags" {
		if err := os.WriteFile(os.Args[2], []byte(cmd.FlagsMarkdown()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gendocs PATH/TO/docs/sinks.md | gendocs flags PATH/TO/docs/flags.md")
		os.Exit(2)
	}
	path := os.Args[1]
	if err := update(path); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: %s: %v\n", path, err)
		os.Exit(1)
	}
}

func update(path string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := sinkdoc.UpdateDoc(doc)
	if err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, info.Mode().Perm())
}
