package engine

import (
	"errors"
	"slices"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/diag"
)

// resume reads the --resume checkpoint, if there is one, and checks that each cluster's
// section belongs to this watch (plan.Cluster.Checkpoint). A checkpoint that does not
// (or is not a whole one) is refused, never overwritten: it may be another watch's,
// whose next start would then replay everything. With several clusters each has its own
// section; one new to the file starts afresh, said in one line.
func (w *session) resume() (*Resume, error) {
	if w.cfg.Resume == "" {
		return nil, nil
	}
	var file *checkpoint.File
	if !w.cfg.ResumeReset {
		var err error
		if file, err = checkpoint.Load(w.cfg.Resume); err != nil {
			var corrupt *checkpoint.CorruptError
			if errors.As(err, &corrupt) {
				return nil, err
			}
			return nil, diag.Usage(err) // a directory, a file that cannot be read
		}
	}
	resume := &Resume{Path: w.cfg.Resume, Clusters: map[string]ClusterResume{}}
	var used []*checkpoint.Saved
	for _, c := range w.plan.Clusters {
		saved, err := file.For(c.Name, c.Checkpoint)
		if err != nil {
			return nil, err
		}
		if slices.Contains(used, saved) {
			saved = nil // a run of one cluster's section, taken by another context of it
		}
		if saved == nil && file != nil {
			w.warnf("cluster %s: --resume %s has no checkpoint of this cluster yet; starting afresh for it", c.Name, w.cfg.Resume)
		}
		if saved != nil {
			used = append(used, saved)
		}
		resume.Clusters[c.Name] = ClusterResume{Watch: c.Checkpoint, Saved: saved}
	}
	resume.Kept = file.Others(used)
	return resume, nil
}
