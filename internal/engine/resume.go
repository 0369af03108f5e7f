package engine

import (
	"context"
	"errors"
	"slices"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/clusterstore"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/leader"
	"k8s.io/client-go/kubernetes"
)

// resume reads the --resume checkpoint, if there is one, and checks that each cluster's
// section belongs to this watch (plan.Cluster.Checkpoint). A checkpoint that does not
// (or is not a whole one) is refused, never overwritten: it may be another watch's,
// whose next start would then replay everything. With several clusters each has its own
// section; one new to the file starts afresh, said in one line.
func (w *session) resume(ctx context.Context) (*Resume, error) {
	if w.cfg.Resume == "" {
		return nil, nil
	}
	store, err := w.resumeStore()
	if err != nil {
		return nil, err
	}
	var file *checkpoint.File
	if !w.cfg.ResumeReset {
		if file, err = store.Load(ctx); err != nil {
			var corrupt *checkpoint.CorruptError
			var notOurs *clusterstore.NotOursError
			_, inCluster := store.(*clusterstore.Store)
			if errors.As(err, &corrupt) || inCluster && !errors.As(err, &notOurs) {
				return nil, err // corrupt (exit 2), or the API server's answer (exit 1)
			}
			return nil, diag.Usage(err) // a directory, a file that cannot be read
		}
	}
	resume := &Resume{Path: store.Name(), Store: store, Clusters: map[string]ClusterResume{}}
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
			w.warnf("cluster %s: --resume %s has no checkpoint of this cluster yet; starting afresh for it", c.Name, store.Name())
		}
		if saved != nil {
			used = append(used, saved)
		}
		resume.Clusters[c.Name] = ClusterResume{Watch: c.Checkpoint, Saved: saved}
	}
	resume.Kept = file.Others(used)
	return resume, nil
}

// resumeStore is where --resume keeps the checkpoint: the file, or with secret:NAME or
// configmap:NAME objects in the cluster (the first cluster's, with several), in the
// pod's namespace unless NAMESPACE/ is given, fenced by --leader-elect's lease.
func (w *session) resumeStore() (checkpoint.Store, error) {
	ref, inCluster, err := clusterstore.ParseRef(w.cfg.Resume)
	if err != nil {
		return nil, diag.Usage(err)
	}
	if !inCluster {
		return checkpoint.FileStore{Path: w.cfg.Resume}, nil
	}
	if ref.Namespace == "" {
		ref.Namespace = leader.DefaultNamespace(w.sys.Kubeconfig.Default.ToRawKubeConfigLoader().RawConfig)
	}
	cfg := afterStopConfig(w.plan.Clusters[0].Config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf" // the shards travel as bytes, not base64
	// A write sends the shards one after another, as fast as the API server answers:
	// client-go's default of 5 requests a second would take 25 s for the first write of
	// 128 shards (10,000 pods), past the store's time limit.
	cfg.QPS, cfg.Burst = 100, 200
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	opts := clusterstore.Options{Client: client, Ref: ref, Warn: w.warnf, Writer: leader.Identity()}
	if w.elector != nil {
		opts.Fence, opts.Writer = w.elector.Fence, w.elector.Identity()
	}
	return clusterstore.New(opts), nil
}
