package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/store"
	"github.com/kubeevents/kubeevents/internal/timetravel"
)

const storeExample = `  # Load a file sink's recordings (its rotated and .gz backups too) into a store
  kubeevents store import /var/log/kubeevents/ --store events.db

  # What it holds: time range, objects, versions, size by type
  kubeevents store info events.db

  # Then travel in time
  kubeevents get deploy,pods -n shop --at '5m ago' --store events.db
  kubeevents history cm/settings -n shop --store events.db --at 2026-11-23T14:05:00Z`

// storeFlags are the flags naming the store: --store, and the config file that may.
type storeFlags struct {
	store, configFile string
}

func (f *storeFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.store, "store", "", "the history store (an SQLite file; default: store: in the config file)")
	fs.StringVar(&f.configFile, "config", "", "config file whose store: is the default store "+configFileDefault)
}

// path is --store, else the config file's store ("" for none).
func (f *storeFlags) path() (string, error) {
	if f.store != "" {
		return f.store, nil
	}
	file, err := loadConfigFile(f.configFile)
	if err != nil || file == nil {
		return "", err
	}
	return file.Store, nil
}

// NewStoreCommand is `kubeevents store import|info`.
func NewStoreCommand(streams genericiooptions.IOStreams) *cobra.Command {
	c := &cobra.Command{
		Use:   "store",
		Short: "A history store: recordings in one SQLite file, indexed for get --at and history",
		Long: `A history store keeps every recorded version of every object in one SQLite file
(docs/store.md), compressed, with indexes: kubeevents get --at shows a namespace as it was,
and history --store an object's versions, without reading whole recordings.`,
		Example: storeExample,
		Args:    cobra.NoArgs,
		RunE:    func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newStoreImportCommand(streams), newStoreInfoCommand(streams))
	return c
}

func newStoreImportCommand(streams genericiooptions.IOStreams) *cobra.Command {
	f := &storeFlags{}
	var skipBadLines bool
	var maxAge, maxSize string
	c := &cobra.Command{
		Use:   "import FILE... --store STORE",
		Short: "Add recordings to a store, creating it if needed",
		Long: `Reads recordings as replay does (files, directories of a file sink's files with their
rotated and .gz backups, quoted patterns, - for stdin), in time order across them, and
adds every event to the store, creating it if it does not exist.`,
		Example: `  kubeevents store import events.jsonl events-2026-11-23T10-00-00.000.jsonl.gz --store events.db
  kubeevents store import /var/log/kubeevents/ --store events.db --max-age 14d --max-size 5GiB`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			path, err := f.path()
			if err != nil {
				return err
			}
			opts := store.Options{Warn: func(format string, args ...any) {
				fmt.Fprintf(streams.ErrOut, "kubeevents: "+format+"\n", args...)
			}}
			if maxAge != "" {
				if opts.MaxAge, err = store.ParseAge(maxAge); err != nil {
					return usageErrorf("--max-age: %v", err)
				}
			}
			if maxSize != "" {
				if opts.MaxSize, err = store.ParseSize(maxSize); err != nil {
					return usageErrorf("--max-size: %v", err)
				}
			}
			return timetravel.Import(c.Context(), timetravel.ImportConfig{Store: path, Files: args, SkipBadLines: skipBadLines,
				Retention: opts, Stdin: streams.In, Out: streams.ErrOut, Now: time.Now})
		},
	}
	f.addFlags(c.Flags())
	c.Flags().BoolVar(&skipBadLines, "skip-bad-lines", false, "skip the lines that are not events kubeevents wrote (counted), rather than stop at the first")
	c.Flags().StringVar(&maxAge, "max-age", "", "drop what was superseded longer than this before the latest event (default: keep all), e.g. 14d or 12h")
	c.Flags().StringVar(&maxSize, "max-size", "", "keep the store (with its log) within this size, oldest versions dropped first, e.g. 5GiB or 500MB")
	return c
}

func newStoreInfoCommand(streams genericiooptions.IOStreams) *cobra.Command {
	f := &storeFlags{}
	c := &cobra.Command{
		Use:     "info [STORE]",
		Short:   "What a store holds: time range, objects, versions, size by type",
		Example: `  kubeevents store info events.db`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			} else {
				var err error
				if path, err = f.path(); err != nil {
					return err
				}
			}
			return timetravel.Info(c.Context(), timetravel.InfoConfig{Store: path, Out: streams.Out})
		},
	}
	c.Flags().StringVar(&f.configFile, "config", "", "config file whose store: is the default store "+configFileDefault)
	return c
}
