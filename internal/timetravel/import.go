package timetravel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/recording"
	"github.com/kubeevents/kubeevents/internal/store"
)

// ImportConfig is `kubeevents store import`.
type ImportConfig struct {
	Store string
	// Files are the recordings as given: files, directories of a file sink's files,
	// quoted patterns, - for the standard input.
	Files        []string
	SkipBadLines bool
	Retention    store.Options
	Stdin        io.Reader
	// Out gets the summary line.
	Out io.Writer
	Now func() time.Time
}

// Import adds recordings to a store, in time order across them, creating the store if
// it does not exist.
func Import(ctx context.Context, cfg ImportConfig) error {
	if cfg.Store == "" {
		return diag.Usagef("no store given: kubeevents store import FILE... --store STORE (or store: in the config file)")
	}
	inputs, err := recording.Expand(cfg.Files, false)
	if err != nil {
		return diag.Usage(err)
	}
	r, err := recording.Open(inputs, recording.Options{SkipBadLines: cfg.SkipBadLines, Stdin: cfg.Stdin})
	if err != nil {
		return diag.Usage(err)
	}
	defer r.Close()
	w, err := store.Create(ctx, cfg.Store, cfg.Retention)
	var notStore *store.NotStoreError
	if errors.As(err, &notStore) {
		return diag.Usage(err)
	}
	if err != nil {
		return err
	}
	start := cfg.Now()
	n, err := importAll(ctx, r, w)
	if cerr := w.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	took := cfg.Now().Sub(start)
	skipped, _ := r.Skipped()
	fmt.Fprintf(cfg.Out, "imported %s into %s in %s (%.0f events/s)", plural(n, "event"), cfg.Store, took.Round(time.Millisecond), float64(n)/max(took.Seconds(), 1e-9))
	if skipped > 0 {
		fmt.Fprintf(cfg.Out, "; skipped %s that kubeevents did not write", plural(skipped, "line"))
	}
	fmt.Fprintln(cfg.Out)
	return nil
}

func importAll(ctx context.Context, r *recording.Reader, w *store.Writer) (int, error) {
	n := 0
	for {
		rec, err := r.Next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			return n, nil
		case err != nil:
			var bad *recording.BadLineError
			if errors.As(err, &bad) {
				return n, diag.Usage(err)
			}
			return n, err
		}
		if err := w.WriteEvent(ctx, store.EventOf(rec)); err != nil {
			var bad *store.BadEventError
			if errors.As(err, &bad) {
				return n, diag.Usage(&recording.BadLineError{At: rec.At, Err: bad.Err})
			}
			return n, err
		}
		n++
	}
}
