// Package clusterstore keeps a --resume checkpoint in the cluster, in Secrets (or
// ConfigMaps) of one namespace, so that any replica of a highly available kubeevents
// (--leader-elect) resumes where the last leader left off. It is a checkpoint.Store: it
// keeps exactly the lines of the checkpoint file (package checkpoint says what they
// hold: per object, the state every sink was delivered, as the sinks got it), and hands
// them back to checkpoint.Read, which checks them as it checks a file.
//
// # Layout
//
// A checkpoint named NAME is an index object NAME and shard objects NAME-SLOT-a and
// NAME-SLOT-b. An object goes to the slot its resource and namespace/name hash to
// (FNV-1a, modulo the number of slots, a power of two), so a change to an object
// changes one shard. A shard holds its slot's object lines, sorted, gzipped, in blocks
// per cluster section; the index holds every section's header line, its object count,
// and per slot the shard object that is current, with the SHA-256 of its lines.
//
// The number of slots follows the checkpoint's size: about SlotBytes of lines per slot
// (a few hundred KiB once compressed), so that every object stays far below the API
// server's limits (1 MiB of data in a Secret or ConfigMap, 1.5 MiB per etcd request). A
// slot whose shard would still exceed MaxShardBytes doubles the slots.
//
// # Writes: atomic, only what changed
//
// Save encodes every object (as the file does) but writes only the shards whose lines
// changed, each to the slot's other object (a, b: never the one the index names), and
// then replaces the index, conditionally on its resourceVersion. A reader that gets the
// index reads the shards it names, which no write touches until a later index names
// the other ones; a shard whose lines do not match the index's hash (a writer replacing
// it at that moment) makes the reader read the index again. So a Load sees one whole
// checkpoint, never a mix, even if a writer dies halfway. Shards of slots no longer used
// are deleted after the index no longer names them. Writes come from checkpoint.Writer:
// at most once a second, and only when some object settled.
//
// # Two writers
//
// One kubeevents writes a checkpoint at a time (--leader-elect makes sure of it). If the
// index changed since this store read or wrote it (another kubeevents wrote it), the
// store says so once, reads it again and replaces it: the checkpoint is then this run's,
// which can only repeat events, never lose them. Options.Fence, asked before every write,
// stops a process that lost its lease from writing at all.
package clusterstore

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
)

// Sizes of the shards.
const (
	// SlotBytes is about how many bytes of object lines (uncompressed) a slot holds:
	// the number of slots is the checkpoint's size over this, rounded to a power of two.
	SlotBytes = 1 << 20
	// MaxShardBytes is the most a shard may hold compressed: well below a Secret's or
	// ConfigMap's 1 MiB of data.
	MaxShardBytes = 768 << 10
	// MaxSlots bounds the number of slots (and so of shard objects, twice that).
	MaxSlots = 4096
	// DefaultTimeout bounds one Load or Save.
	DefaultTimeout = 30 * time.Second
)

// Data keys of the index and of a shard.
const (
	indexKey = "index.json"
	shardKey = "objects.jsonl.gz"
)

const (
	indexFormat  = "kubeevents-checkpoint-index"
	indexVersion = 1
)

// Options configure a Store.
type Options struct {
	Client kubernetes.Interface
	Ref    Ref // with its Namespace
	// Fence, when not nil, is asked before every write: an error (the lease was lost)
	// stops the write, which fails with it.
	Fence func() error
	// Warn says what the user should know: another kubeevents wrote the checkpoint.
	Warn func(format string, args ...any)
	// Writer names this process in the index (the pod's name and a unique suffix), so
	// that another one can say who wrote it.
	Writer string
	// Timeout bounds one Load or one Save (0: DefaultTimeout).
	Timeout time.Duration
	// SlotBytes replaces the package's SlotBytes (tests; 0: SlotBytes).
	SlotBytes int
}

// Store is a checkpoint.Store in the cluster. Its methods are called from one goroutine
// at a time (cmd's Load, then the checkpoint Writer's), as checkpoint.Store says.
type Store struct {
	o    Options
	objs objects

	// cur is the index as last read or written, curRV its resourceVersion ("" when
	// there is none in the cluster yet); read is whether it has been read at all.
	cur   *index
	curRV string
	// curExists says the index object exists (curRV may be "" for a fake API server's).
	curExists bool
	read      bool
	// known are the shard objects this store read or wrote, by name: their
	// resourceVersion, for a conditional update.
	known        map[string]string
	warnedWriter bool
	// slotBytes is each slot's lines' size at the last write, which sizes the next one
	// (after a Load, estimated from the index's).
	slotBytes map[int]int64
	// What the last Save did (tests, figures): slots encoded, shards to write, shards
	// written.
	lastEncoded, lastPlanned, lastShardsPut int
	// tooBig are the objects said to be kept by their metadata only (saidTooBig).
	tooBig map[string]bool
	// mayUseSlots is the most slots whose shards this user was found to be allowed to
	// use; mayNotUse why it may not use mayNotUseSlots or more (mayUse).
	mayUseSlots, mayNotUseSlots int
	mayNotUse                   error
	warnedSlots                 bool
}

// New makes the store of o.Ref.
func New(o Options) *Store {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.SlotBytes == 0 {
		o.SlotBytes = SlotBytes
	}
	var objs objects = secrets{client: o.Client, namespace: o.Ref.Namespace}
	if o.Ref.Kind == ConfigMaps {
		objs = configMaps{client: o.Client, namespace: o.Ref.Namespace}
	}
	return &Store{o: o, objs: objs, known: map[string]string{}}
}

// Name is the reference: secret:NAMESPACE/NAME.
func (s *Store) Name() string { return s.o.Ref.String() }

// index is the index object's content.
type index struct {
	Format   string         `json:"format"`
	Version  int            `json:"version"`
	Writer   string         `json:"writer,omitempty"`
	Written  time.Time      `json:"written"`
	Sections []indexSection `json:"sections"`
	Slots    int            `json:"slots"`
	// Extent is how many slots may have shard objects: those from Slots on are deleted
	// by the next write.
	Extent int `json:"extent"`
	// Bytes are the object lines, uncompressed: what sizes the next write's slots.
	Bytes  int64   `json:"bytes"`
	Shards []shard `json:"shards"` // one per slot that holds objects, by slot
}

type indexSection struct {
	Context string          `json:"context"`
	Header  json.RawMessage `json:"header"`
	Objects int             `json:"objects"`
}

type shard struct {
	Slot    int    `json:"slot"`
	Name    string `json:"name"`
	SHA256  string `json:"sha256"` // of the lines, uncompressed
	Objects int    `json:"objects"`
	Bytes   int    `json:"bytes"` // compressed
	// Versions is the SHA-256 of the shard's objects' resources, keys and
	// resourceVersions: equal, the lines are too, and a write need not encode them.
	// "" when some object has no resourceVersion (a kept section's).
	Versions string `json:"versions,omitempty"`
}

// blockHeader starts a section's lines within a shard.
type blockHeader struct {
	Context string `json:"context"`
	Objects int    `json:"objects"`
}

// NotOursError says the object the reference names exists and is not a checkpoint: a
// store never reads it as one or replaces it.
type NotOursError struct {
	Ref  Ref
	What string
}

func (e *NotOursError) Error() string {
	return fmt.Sprintf("--resume %s: %s %s/%s exists and is not a kubeevents checkpoint (%s); give --resume another name",
		e.Ref, e.Ref.Kind, e.Ref.Namespace, e.Ref.Name, e.What)
}

// apiError says what a request about the checkpoint met, in one line (Load puts
// "--resume NAME: " before it, and a checkpoint.WriteError does for Save).
func (s *Store) apiError(verb, name string, err error) error {
	what := string(s.o.Ref.Kind) + " " + s.o.Ref.Namespace + "/" + name
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("not allowed to %s %s: %s (grant get, create, update and delete on %ss in namespace %s, as the chart's Role does)",
			verb, what, apierrors.ReasonForError(err), s.o.Ref.Kind, s.o.Ref.Namespace)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s %s: no answer within %s", verb, what, s.o.Timeout)
	}
	return fmt.Errorf("%s %s: %w", verb, what, err)
}

func (s *Store) corrupt(format string, args ...any) error {
	return &checkpoint.CorruptError{Path: s.Name(), What: fmt.Sprintf(format, args...)}
}

// errReread says a shard did not match the index: a writer was replacing it.
var errReread = errors.New("a shard changed while it was read")

// Load reads the index and the shards it names and hands their lines to
// checkpoint.Read. A shard that does not match the index (a writer at work) makes it
// read the index again, a few times, before it calls the checkpoint corrupt.
func (s *Store) Load(ctx context.Context) (*checkpoint.File, error) {
	file, err := s.loadWhole(ctx)
	var c *checkpoint.CorruptError
	var notOurs *NotOursError
	if err != nil && !errors.As(err, &c) && !errors.As(err, &notOurs) {
		err = fmt.Errorf("--resume %s: %w", s.Name(), err)
	}
	return file, err
}

func (s *Store) loadWhole(ctx context.Context) (*checkpoint.File, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		file, err := s.load(ctx)
		if !errors.Is(err, errReread) {
			return file, err
		}
		if attempt == 4 {
			return nil, s.corrupt("its shards do not match its index (read %d times)", attempt)
		}
		select {
		case <-ctx.Done():
			return nil, s.apiError("read", s.o.Ref.Name, ctx.Err())
		case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
		}
	}
}

func (s *Store) load(ctx context.Context) (*checkpoint.File, error) {
	idx, rv, err := s.getIndex(ctx)
	if err != nil {
		return nil, err
	}
	if idx == nil {
		return nil, s.orphans(ctx)
	}
	// Every section's lines, in slot order: shards are read one at a time and their
	// blocks kept (decompressed) until the checkpoint is read whole.
	lines := make(map[string][][]byte, len(idx.Sections))
	for _, sh := range idx.Shards {
		blocks, err := s.readShard(ctx, sh)
		if err != nil {
			return nil, err
		}
		for _, b := range blocks {
			lines[b.context] = append(lines[b.context], b.lines)
		}
	}
	var readers []io.Reader
	for _, sec := range idx.Sections {
		readers = append(readers, bytes.NewReader(append(slices.Clip(sec.Header), '\n')))
		for _, l := range lines[sec.Context] {
			readers = append(readers, bytes.NewReader(l))
		}
		readers = append(readers, bytes.NewReader(checkpoint.EndLine(sec.Objects)))
		delete(lines, sec.Context)
	}
	for context := range lines {
		return nil, s.corrupt("a shard holds objects of cluster %q, which the index does not list", context)
	}
	file, err := checkpoint.Read(s.Name(), io.MultiReader(readers...))
	var c *checkpoint.CorruptError
	if errors.As(err, &c) {
		c.Line = 0 // a line of the lines put together, not of any object in the cluster
	}
	if err != nil {
		return nil, err
	}
	s.cur, s.curRV, s.read, s.curExists = idx, rv, true, true
	return file, nil
}

// getIndex reads the index: nil (and no error) if there is none.
func (s *Store) getIndex(ctx context.Context) (*index, string, error) {
	obj, err := s.objs.get(ctx, s.o.Ref.Name)
	if apierrors.IsNotFound(err) {
		s.cur, s.curRV, s.read, s.curExists = nil, "", true, false
		return nil, "", nil
	}
	if err != nil {
		return nil, "", s.apiError("get", s.o.Ref.Name, err)
	}
	if !obj.ours {
		return nil, "", &NotOursError{Ref: s.o.Ref, What: "it was not made by kubeevents"}
	}
	raw, ok := obj.data[indexKey]
	if !ok {
		return nil, "", s.corrupt("%s %s/%s has no %s", s.o.Ref.Kind, s.o.Ref.Namespace, s.o.Ref.Name, indexKey)
	}
	var idx index
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, "", s.corrupt("its index cannot be read: %v", err)
	}
	if idx.Format != indexFormat {
		return nil, "", s.corrupt("its index is not a kubeevents checkpoint's")
	}
	if idx.Version != indexVersion {
		return nil, "", s.corrupt("index version %d, this kubeevents reads version %d", idx.Version, indexVersion)
	}
	if idx.Slots < 1 || idx.Slots > MaxSlots || idx.Slots&(idx.Slots-1) != 0 {
		return nil, "", s.corrupt("its index has %d slots, not a power of two up to %d", idx.Slots, MaxSlots)
	}
	for i, sh := range idx.Shards {
		a, b := shardNames(s.o.Ref.Name, sh.Slot)
		if sh.Slot < 0 || sh.Slot >= idx.Slots || (i > 0 && sh.Slot <= idx.Shards[i-1].Slot) || (sh.Name != a && sh.Name != b) {
			return nil, "", s.corrupt("its index names shard %q for slot %d", sh.Name, sh.Slot)
		}
	}
	s.known[s.o.Ref.Name] = obj.rv
	return &idx, obj.rv, nil
}

// orphans says, when there is no index, whether the first slot's shards are there: then
// the index was deleted by hand (or the checkpoint half of it), and starting afresh is
// for the user to decide, as with a corrupt checkpoint.
func (s *Store) orphans(ctx context.Context) error {
	a, b := shardNames(s.o.Ref.Name, 0)
	for _, name := range []string{a, b} {
		obj, err := s.objs.get(ctx, name)
		if err == nil && obj.ours {
			return s.corrupt("its index %s %s/%s is gone but its shards remain (deleted by hand?); kubectl delete %ss -n %s -l %s=%s deletes them all",
				s.o.Ref.Kind, s.o.Ref.Namespace, s.o.Ref.Name, s.o.Ref.Kind, s.o.Ref.Namespace, CheckpointLabel, s.o.Ref.Name)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return s.apiError("get", name, err)
		}
	}
	return nil
}

type block struct {
	context string
	lines   []byte // whole lines
}

// readShard reads one shard and checks it against the index.
func (s *Store) readShard(ctx context.Context, sh shard) ([]block, error) {
	obj, err := s.objs.get(ctx, sh.Name)
	if apierrors.IsNotFound(err) {
		return nil, errReread
	}
	if err != nil {
		return nil, s.apiError("get", sh.Name, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(obj.data[shardKey]))
	if err != nil {
		return nil, errReread
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, errReread
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != sh.SHA256 {
		return nil, errReread
	}
	s.known[sh.Name] = obj.rv
	var blocks []block
	objects := 0
	r := bufio.NewReader(bytes.NewReader(raw))
	for start := 0; start < len(raw); {
		first, err := r.ReadBytes('\n')
		if err != nil {
			return nil, s.corrupt("shard %s ends in the middle of a line", sh.Name)
		}
		var h blockHeader
		if err := json.Unmarshal(first, &h); err != nil || h.Objects < 1 {
			return nil, s.corrupt("shard %s: a block without its header", sh.Name)
		}
		start += len(first)
		end := start
		for range h.Objects {
			l, err := r.ReadBytes('\n')
			if err != nil {
				return nil, s.corrupt("shard %s: a block of %d objects ends early", sh.Name, h.Objects)
			}
			end += len(l)
		}
		blocks = append(blocks, block{context: h.Context, lines: raw[start:end]})
		objects += h.Objects
		start = end
	}
	if objects != sh.Objects {
		return nil, s.corrupt("shard %s holds %d objects, its index says %d", sh.Name, objects, sh.Objects)
	}
	return blocks, nil
}

// shardNames are slot's two shard objects: a write puts the slot's lines into the one
// the index does not name.
func shardNames(name string, slot int) (a, b string) {
	base := name + "-" + strconv.Itoa(slot) + "-"
	return base + "a", base + "b"
}

// twin is the shard object of slot that is not current ("" for none: the first, a).
func twin(name string, slot int, current string) string {
	a, b := shardNames(name, slot)
	if current == a {
		return b
	}
	return a
}

// Save writes snap: the shards that changed, then the index. It gives up once ctx ends
// or Options.Timeout has passed, saying so; the checkpoint in the cluster is then the
// one before, whole.
func (s *Store) Save(ctx context.Context, snap *checkpoint.Snapshot) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	s.lastPlanned, s.lastShardsPut = 0, 0
	err := s.saveAll(ctx, snap)
	if err != nil && ctx.Err() != nil {
		done := fmt.Sprintf("%d of %d shards written, not the index", s.lastShardsPut, s.lastPlanned)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("not written within %s (%s): the API server answers too slowly; the checkpoint in the cluster is the one before",
				deadline.Sub(start).Round(100*time.Millisecond), done)
		}
		return fmt.Errorf("stopped before it was written (%s); the checkpoint in the cluster is the one before", done)
	}
	return err
}

func (s *Store) saveAll(ctx context.Context, snap *checkpoint.Snapshot) error {
	if err := s.fence(); err != nil {
		return err
	}
	if !s.read {
		// Not loaded (--resume-reset): learn what is there, to replace it whatever it
		// holds, unless it is not a checkpoint at all.
		if err := s.reread(ctx, true); err != nil {
			return err
		}
	}
	for attempt := 1; ; attempt++ {
		err := s.save(ctx, snap)
		if !errors.Is(err, errIndexChanged) {
			return err
		}
		if attempt == 3 {
			return fmt.Errorf("its index keeps changing under this kubeevents: another one writes it (run them with --leader-elect)")
		}
		// The index changed since this store read or wrote it: read it again (its
		// shards are then the ones not to touch) and replace it.
		deleted := errors.Is(err, errIndexDeleted)
		if err := s.reread(ctx, true); err != nil {
			return err
		}
		if s.o.Warn == nil || s.warnedWriter {
			continue
		}
		s.warnedWriter = true
		switch {
		case deleted:
			s.o.Warn("--resume %s was deleted while this kubeevents ran; writing it again", s.Name())
		case s.cur == nil:
			s.o.Warn("--resume %s was changed by something other than kubeevents and is no checkpoint now; replacing it", s.Name())
		default:
			writer := cmp.Or(s.cur.Writer, "another kubeevents")
			s.o.Warn("--resume %s was written by %s since this kubeevents read it; replacing it (two kubeevents must not share a checkpoint: run them with --leader-elect)", s.Name(), writer)
		}
	}
}

// reread reads the index again into cur and curRV. With replace, an index that cannot
// be read is to be replaced whole: cur is nil, curRV its resourceVersion.
func (s *Store) reread(ctx context.Context, replace bool) error {
	idx, rv, err := s.getIndex(ctx)
	var c *checkpoint.CorruptError
	exists := idx != nil
	if errors.As(err, &c) && replace {
		obj, gerr := s.objs.get(ctx, s.o.Ref.Name)
		if gerr != nil {
			return s.apiError("get", s.o.Ref.Name, gerr)
		}
		idx, rv, err, exists = nil, obj.rv, nil, true
	}
	if err != nil {
		return err
	}
	s.cur, s.curRV, s.read, s.curExists = idx, rv, true, exists
	return nil
}

// errIndexChanged says the index is not what this store read or wrote last: another
// writer replaced it (or errIndexDeleted: it was deleted).
var (
	errIndexChanged = errors.New("the index changed")
	errIndexDeleted = fmt.Errorf("%w: deleted", errIndexChanged)
)

func (s *Store) fence() error {
	if s.o.Fence == nil {
		return nil
	}
	if err := s.o.Fence(); err != nil {
		return fmt.Errorf("%w (the replica that leads now writes it)", err)
	}
	return nil
}

// entry is one object of the snapshot, placed in a slot.
type entry struct {
	section int
	sortKey string
	obj     *checkpoint.SnapshotObject
	line    []byte // encoded already (a kept object's: its slot is its line's hash)
}

// pending is a shard to write: its slot, its object's name and its data, gzipped.
type pending struct {
	slot int
	name string
	data []byte
}

// save decides how many slots the checkpoint takes and encodes the shards that changed,
// before it writes anything; records in the index that slots it did not cover may now
// have shards (reserve); writes the shards, then the index.
func (s *Store) save(ctx context.Context, snap *checkpoint.Snapshot) error {
	prev := s.cur
	slots := s.usableSlots(ctx, prev, s.slotsFor(prev, snap))
	next, shards, err := s.plan(ctx, snap, prev, slots)
	if err != nil {
		return err
	}
	if err := s.reserve(ctx, prev, next, shards); err != nil {
		return err
	}
	s.lastPlanned = len(shards)
	for _, sh := range shards {
		if err := s.fence(); err != nil {
			return err
		}
		if err := s.put(ctx, sh.name, map[string][]byte{shardKey: sh.data}); err != nil {
			return err
		}
		s.lastShardsPut++
	}
	return s.writeIndex(ctx, next)
}

// covered is how many slots prev says may have shard objects: those the next write
// deletes if it uses fewer.
func covered(prev *index) int {
	if prev == nil {
		return 0
	}
	return max(prev.Extent, prev.Slots)
}

// usableSlots is how many slots this write may use: want, unless that is more than the
// checkpoint ever used and this user may not use the shard objects of so many (a Role
// that names those of fewer slots); then the most it may use, said once.
func (s *Store) usableSlots(ctx context.Context, prev *index, want int) int {
	have := max(covered(prev), 1)
	if want <= have {
		return want
	}
	err := s.mayUse(ctx, want)
	if err == nil {
		return want
	}
	n := want / 2
	for n > have && s.mayUse(ctx, n) != nil {
		n /= 2
	}
	n = max(n, have)
	if !s.warnedSlots && s.o.Warn != nil {
		s.warnedSlots = true
		s.o.Warn("--resume %s: %v; keeping %d, whose shards grow larger", s.Name(), err, n)
	}
	return n
}

// mayUse says whether this user may get, update and delete the shard objects of slots
// slots, the last of which (NAME-(slots-1)-b) stands for them all: a Role that names the
// checkpoint's objects (the chart's) names those of a number of slots. Asked of the API
// server (SelfSubjectAccessReview) once per number of slots; without an answer, yes.
// Create cannot be restricted by name, so without asking, a checkpoint would grow into
// shards it may create but not read, and no replica could resume from it.
func (s *Store) mayUse(ctx context.Context, slots int) error {
	if slots <= s.mayUseSlots {
		return nil
	}
	if s.mayNotUse != nil && slots >= s.mayNotUseSlots {
		return s.mayNotUse
	}
	_, name := shardNames(s.o.Ref.Name, slots-1)
	var denied []string
	for _, verb := range []string{"get", "update", "delete"} {
		ok, err := s.objs.allowed(ctx, verb, name)
		if err != nil {
			return nil // not known: the requests will say
		}
		if !ok {
			denied = append(denied, verb)
		}
	}
	if len(denied) > 0 {
		s.mayNotUse = fmt.Errorf("the checkpoint needs %d slots, but this user may not %s %s %s/%s (a Role that names the shards of fewer slots: raise the chart's checkpoint.maxSlots)",
			slots, strings.Join(denied, ", "), s.o.Ref.Kind, s.o.Ref.Namespace, name)
		s.mayNotUseSlots = slots
		return s.mayNotUse
	}
	s.mayUseSlots = slots
	return nil
}

// reserve records in the index, before a shard is written in a slot it does not cover
// yet, that the shards of next.Extent slots may exist: a write that fails halfway then
// leaves no shard that the next write does not delete. The index is otherwise the one
// before (or, with none yet, one of no objects), so what a reader gets does not change.
func (s *Store) reserve(ctx context.Context, prev, next *index, shards []pending) error {
	limit := covered(prev)
	if !slices.ContainsFunc(shards, func(p pending) bool { return p.slot >= limit }) {
		return nil
	}
	var r index
	if prev != nil {
		r = *prev
	} else {
		r = index{Format: indexFormat, Version: indexVersion, Writer: s.o.Writer, Written: next.Written, Slots: 1}
		for _, sec := range next.Sections {
			r.Sections = append(r.Sections, indexSection{Context: sec.Context, Header: sec.Header})
		}
	}
	r.Extent = next.Extent
	if err := s.fence(); err != nil {
		return err
	}
	return s.putIndex(ctx, &r)
}

// slotsFor is how many slots this write uses: the last write's, unless the checkpoint
// grew past twice SlotBytes a slot or shrank below a quarter of it.
func (s *Store) slotsFor(prev *index, snap *checkpoint.Snapshot) int {
	var bytes int64
	slots := 1
	if prev != nil {
		bytes, slots = prev.Bytes, prev.Slots
	} else {
		// A first write: the size is not known yet. Estimate it from a sample of the
		// objects, rather than write every shard twice.
		for i := range snap.Sections {
			objs := snap.Sections[i].Objects
			step := max(1, len(objs)/256)
			var sample, sampled int64
			var buf []byte
			for j := 0; j < len(objs); j += step {
				var err error
				if buf, err = objs[j].AppendLine(buf[:0]); err == nil {
					sample += int64(len(buf))
					sampled++
				}
			}
			if sampled > 0 {
				bytes += sample * int64(len(objs)) / sampled
			}
		}
	}
	target := int64(s.o.SlotBytes)
	if bytes > 2*target*int64(slots) || bytes < target*int64(slots)/4 {
		slots = 1
		for int64(slots)*target < bytes && slots < MaxSlots {
			slots *= 2
		}
	}
	return slots
}

// plan groups the snapshot's objects into slots and encodes every slot whose objects
// changed since prev; it returns the index that names all the shards, and those to
// write (into the slot's object the index does not name), all before anything is
// written. A slot whose shard would hold more than MaxShardBytes doubles the slots; an
// object too big for a shard by itself is kept by its metadata only (stub).
func (s *Store) plan(ctx context.Context, snap *checkpoint.Snapshot, prev *index, slots int) (*index, []pending, error) {
	for {
		next, shards, grow, err := s.planSlots(snap, prev, slots)
		if err != nil || !grow {
			return next, shards, err
		}
		if slots >= MaxSlots {
			return nil, nil, fmt.Errorf("a shard holds more than %d KiB even in %d slots", MaxShardBytes>>10, slots)
		}
		slots *= 2
		if slots > max(covered(prev), 1) {
			if err := s.mayUse(ctx, slots); err != nil {
				return nil, nil, fmt.Errorf("a shard of %d slots would hold more than %d KiB, and %w", slots/2, MaxShardBytes>>10, err)
			}
		}
	}
}

// planSlots is one try of plan with slots slots: grow says a shard would be too big.
func (s *Store) planSlots(snap *checkpoint.Snapshot, prev *index, slots int) (_ *index, _ []pending, grow bool, _ error) {
	bySlot := make([][]entry, slots)
	next := &index{Format: indexFormat, Version: indexVersion, Writer: s.o.Writer, Written: time.Now().UTC(), Slots: slots}
	next.Extent = max(covered(prev), slots)
	for i := range snap.Sections {
		sec := &snap.Sections[i]
		next.Sections = append(next.Sections, indexSection{Context: sec.Context, Header: sec.Header, Objects: len(sec.Objects)})
		for j := range sec.Objects {
			o := &sec.Objects[j]
			e := entry{section: i, obj: o}
			h := fnv.New64a()
			h.Write([]byte(sec.Context))
			h.Write([]byte{0})
			h.Write([]byte(o.Resource))
			h.Write([]byte{0})
			if o.Key != "" {
				h.Write([]byte(o.Key))
				e.sortKey = o.Resource + "\x00" + o.Key
			} else {
				line, err := o.AppendLine(nil)
				if err != nil {
					return nil, nil, false, err
				}
				h.Write(line)
				e.line, e.sortKey = line, o.Resource+"\x00"+string(line)
			}
			slot := int(h.Sum64() & uint64(slots-1))
			bySlot[slot] = append(bySlot[slot], e)
		}
	}
	var prevShards map[int]shard
	if prev != nil && prev.Slots == slots {
		prevShards = make(map[int]shard, len(prev.Shards))
		for _, sh := range prev.Shards {
			prevShards[sh.Slot] = sh
		}
	}
	current := map[int]string{} // the shard object each slot's index entry names now
	if prev != nil {
		for _, sh := range prev.Shards {
			current[sh.Slot] = sh.Name
		}
	}
	// What each slot's lines took at the last write: the checkpoint's size is known
	// without encoding the slots that did not change.
	prevBytes := s.slotBytes
	if prevShards == nil || prevBytes == nil {
		prevBytes = map[int]int64{}
	}
	slotBytes := make(map[int]int64, slots)
	prevObjects := 0
	if prev != nil {
		for _, sh := range prev.Shards {
			prevObjects += sh.Objects
		}
	}
	var shards []pending
	var buf, zbuf bytes.Buffer
	s.lastEncoded = 0
	for slot, entries := range bySlot {
		if len(entries) == 0 {
			continue
		}
		slices.SortFunc(entries, func(a, b entry) int {
			if a.section != b.section {
				return a.section - b.section
			}
			return strings.Compare(a.sortKey, b.sortKey)
		})
		versions := versionsOf(snap, entries)
		if old, ok := prevShards[slot]; ok && versions != "" && old.Versions == versions && old.Objects == len(entries) {
			// The same states of the same objects: the same lines, not encoded again.
			n, known := prevBytes[slot]
			if !known && prevObjects > 0 {
				// Read, not written, by this store: its share of the checkpoint's size.
				n = prev.Bytes * int64(old.Objects) / int64(prevObjects)
			}
			next.Bytes += n
			slotBytes[slot] = n
			next.Shards = append(next.Shards, old)
			continue
		}
		if err := s.encodeSlot(&buf, snap, entries); err != nil {
			return nil, nil, false, err
		}
		next.Bytes += int64(buf.Len())
		s.lastEncoded++
		sum := sha256.Sum256(buf.Bytes())
		sh := shard{Slot: slot, SHA256: hex.EncodeToString(sum[:]), Objects: len(entries), Versions: versions}
		slotBytes[slot] = int64(buf.Len())
		if old, ok := prevShards[slot]; ok && old.SHA256 == sh.SHA256 && old.Objects == sh.Objects {
			old.Versions = versions
			next.Shards = append(next.Shards, old) // unchanged: not written
			continue
		}
		if err := gzipTo(&zbuf, buf.Bytes()); err != nil {
			return nil, nil, false, err
		}
		if zbuf.Len() > MaxShardBytes {
			return nil, nil, true, nil
		}
		sh.Bytes = zbuf.Len()
		sh.Name = twin(s.o.Ref.Name, slot, current[slot])
		shards = append(shards, pending{slot: slot, name: sh.Name, data: slices.Clone(zbuf.Bytes())})
		next.Shards = append(next.Shards, sh)
	}
	s.slotBytes = slotBytes
	return next, shards, false, nil
}

// maxLineBytes is the most one object's line may take, gzipped, to fit in a shard with
// its block's header.
const maxLineBytes = MaxShardBytes - 4<<10

// encodeSlot puts a slot's lines into buf: a block per section, each a header line and
// its objects' lines. An object whose line alone is too big for a shard, gzipped, goes
// in by its metadata only (checkpoint.SnapshotObject.AppendStubLine), said once.
func (s *Store) encodeSlot(buf *bytes.Buffer, snap *checkpoint.Snapshot, entries []entry) error {
	buf.Reset()
	var zbuf bytes.Buffer
	for i := 0; i < len(entries); {
		sec := entries[i].section
		n := 0
		for i+n < len(entries) && entries[i+n].section == sec {
			n++
		}
		head, _ := json.Marshal(blockHeader{Context: snap.Sections[sec].Context, Objects: n})
		buf.Write(head)
		buf.WriteByte('\n')
		for _, e := range entries[i : i+n] {
			start := buf.Len()
			if e.line != nil {
				buf.Write(e.line)
			} else {
				b, err := e.obj.AppendLine(buf.AvailableBuffer())
				if err != nil {
					return err
				}
				buf.Write(b)
			}
			line := buf.Bytes()[start:]
			if len(line) <= maxLineBytes {
				continue // no smaller gzipped
			}
			if err := gzipTo(&zbuf, line); err != nil {
				return err
			}
			if zbuf.Len() <= maxLineBytes {
				continue
			}
			size := zbuf.Len()
			buf.Truncate(start)
			b, err := e.obj.AppendStubLine(buf.AvailableBuffer(), fmt.Sprintf(
				"metadata only: the object took %d KiB gzipped, more than a shard of the checkpoint holds (%d KiB)", size>>10, maxLineBytes>>10))
			if err != nil {
				return err
			}
			buf.Write(b)
			s.saidTooBig(snap.Sections[sec].Context, e, size)
		}
		i += n
	}
	return nil
}

// saidTooBig says, once per object, that the checkpoint keeps its metadata only.
func (s *Store) saidTooBig(context string, e entry, size int) {
	key := context + "\x00" + e.sortKey
	if s.tooBig[key] || s.o.Warn == nil {
		return
	}
	if s.tooBig == nil {
		s.tooBig = map[string]bool{}
	}
	s.tooBig[key] = true
	what := e.obj.Resource
	if e.obj.Key != "" {
		what += " " + e.obj.Key
	}
	s.o.Warn("--resume %s: %s takes %d KiB gzipped, more than a shard holds (%d KiB): the checkpoint keeps its metadata only; a replica that resumes from it emits its next change once, told against that metadata",
		s.Name(), what, size>>10, maxLineBytes>>10)
}

// gzipTo puts data, gzipped, into zbuf.
func gzipTo(zbuf *bytes.Buffer, data []byte) error {
	zbuf.Reset()
	zw, _ := gzip.NewWriterLevel(zbuf, gzip.DefaultCompression)
	_, _ = zw.Write(data)
	return zw.Close()
}

// versionsOf is the SHA-256 of a slot's objects' resources, keys and resourceVersions
// (entries sorted); "" if some object has no resourceVersion.
func versionsOf(snap *checkpoint.Snapshot, entries []entry) string {
	h := sha256.New()
	for _, e := range entries {
		v := e.obj.Version()
		if v == "" || e.obj.Key == "" {
			return ""
		}
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\n", snap.Sections[e.section].Context, e.obj.Resource, e.obj.Key, v)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// put writes a shard object: an update of one this store knows, else a create; one that
// exists without this store knowing it is replaced only if a store made it.
func (s *Store) put(ctx context.Context, name string, data map[string][]byte) error {
	o := &object{name: name, labels: s.labels(), data: data}
	if rv, ok := s.known[name]; ok {
		o.rv = rv
		newRV, err := s.objs.update(ctx, o)
		if err == nil {
			s.known[name] = newRV
			return nil
		}
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return s.apiError("update", name, err)
		}
		delete(s.known, name) // changed or deleted under this store: as if unknown
	}
	newRV, err := s.objs.create(ctx, o)
	if apierrors.IsAlreadyExists(err) {
		existing, gerr := s.objs.get(ctx, name)
		if gerr != nil {
			return s.apiError("get", name, gerr)
		}
		if !existing.ours {
			return &NotOursError{Ref: Ref{Kind: s.o.Ref.Kind, Namespace: s.o.Ref.Namespace, Name: name}, What: "a shard of --resume " + s.Name() + " would replace it"}
		}
		o.rv = existing.rv
		newRV, err = s.objs.update(ctx, o)
	}
	if err != nil {
		return s.apiError("write", name, err)
	}
	s.known[name] = newRV
	return nil
}

func (s *Store) labels() map[string]string {
	l := map[string]string{ManagedByLabel: ManagedBy}
	if len(validation.IsValidLabelValue(s.o.Ref.Name)) == 0 {
		l[CheckpointLabel] = s.o.Ref.Name
	}
	return l
}

// writeIndex replaces the index with next (putIndex), then deletes the shards of slots
// next does not use.
func (s *Store) writeIndex(ctx context.Context, next *index) error {
	if err := s.fence(); err != nil {
		return err
	}
	if err := s.putIndex(ctx, next); err != nil {
		return err
	}
	// The shards of slots no longer used: the index names none of them now.
	deleted := true
	for slot := next.Slots; slot < next.Extent; slot++ {
		a, b := shardNames(s.o.Ref.Name, slot)
		for _, name := range []string{a, b} {
			if err := s.objs.delete(ctx, name); err != nil && !apierrors.IsNotFound(err) {
				deleted = false
			}
			delete(s.known, name)
		}
	}
	if deleted {
		next.Extent = next.Slots // recorded by the next write
	}
	return nil
}

// putIndex replaces the index with idx if it is still the one this store read or wrote
// last (curRV), or makes it if there was none.
func (s *Store) putIndex(ctx context.Context, idx *index) error {
	raw, err := json.Marshal(idx)
	if err != nil {
		return err
	}
	o := &object{name: s.o.Ref.Name, rv: s.curRV, labels: s.labels(), data: map[string][]byte{indexKey: raw}}
	var rv string
	if !s.curExists {
		rv, err = s.objs.create(ctx, o)
		if apierrors.IsAlreadyExists(err) {
			return errIndexChanged
		}
	} else {
		rv, err = s.objs.update(ctx, o)
		switch {
		case apierrors.IsNotFound(err):
			return errIndexDeleted
		case apierrors.IsConflict(err):
			return errIndexChanged
		}
	}
	if err != nil {
		return s.apiError("write", s.o.Ref.Name, err)
	}
	s.cur, s.curRV, s.curExists = idx, rv, true
	s.known[s.o.Ref.Name] = rv
	return nil
}
