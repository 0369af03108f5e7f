// Package decode reads list and watch responses as client-go does, to the same objects,
// in less time: the informers' decoders at the source edge. The protobuf watch decoder of
// typed objects (WatchTyped) with its part reuse, the list reader (TypedLister), and the
// one-pass JSON watch decoder of unstructured ones (WatchUnstructured).
// KUBEEVENTS_WIRE_DECODERS=off (fastpath.Settings.NoWireDecoders) reads with client-go's
// decoders instead.
//
// # The fast paths and their invariant
//
// Three shortcuts treat "the same memory" as "the same value":
//
//   - part reuse: the protobuf watch gives a new version of an object the top-level parts
//     (spec, status, data, ...) whose bytes did not change from the previous version's,
//     the very same slices, maps and pointers, instead of decoding them again;
//   - part copying: the render edge's part cache (package partjson) copies a part's JSON
//     from the previous version when the part's memory is that version's;
//   - the diff's shortcut: render compares a field whose memory is the same on both
//     sides as equal without walking it.
//
// They rest on one invariant, stated here and nowhere else:
//
//	Once an object is decoded, nothing changes it outside its metadata (metadata,
//	apiVersion and kind): not the informer's transform, not a listener, renderer or
//	sink.
//
// Metadata is never shared between versions (resourceVersion changes with each), so the
// transform may edit it: it drops managedFields and fills in apiVersion and kind. (It
// also redacts Secret values, but those Secrets are watched as unstructured objects,
// decoded whole every time, with nothing shared.) Anything else changed in place would
// change every version sharing that memory: a diff would miss the change, and a copied
// JSON part would be stale. The informer's TestTransformLeavesReusedPartsAlone fails when
// its transform changes anything but the metadata of an object whose parts are reused.
//
// A user who suspects a wrong diff turns the three off with KUBEEVENTS_FAST_PATHS=off
// (internal/switches, read once by cmd): the output must be byte for byte the same, which
// TestFastPathsOffPrintsTheSame and the end-to-end TestDiffSameWithFastPathsOff check.
package decode
