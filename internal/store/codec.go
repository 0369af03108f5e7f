package store

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// codec compresses each version's line against another line as a dictionary, so that
// it costs what differs: a change with s2 against the object's previous versions (the
// two lines before it, nextDict), a snapshot with zstd (its "patch from" use of a raw
// dictionary) against its resource's reference line (resources.dict). Measured on a
// status churn of realistic pods (bench/README.md): 5 KB lines become about 250 bytes as
// changes and 300 as snapshots, where zstd alone makes 1,500. Changes are s2's because
// their dictionary differs every time: zstd indexes it into a 256 KiB table, s2 into 32
// KiB, a third less CPU an event for changes some 20% larger. Snapshots keep zstd, whose
// table for a resource's line is kept from one snapshot to the next. The fastest levels:
// zstd's better ones cost 5 to 20 times the CPU for 5 to 15% less.
//
// A codec is used by one goroutine at a time.
type codec struct {
	enc    *zstd.Encoder
	dec    *zstd.Decoder
	out    bytes.Buffer
	change []byte
}

// maxLine bounds what a stored line decodes to (a damaged store, not a real object).
const maxLine = 64 << 20

func newCodec() *codec {
	// The frames carry no checksum (SQLite checks its pages) and dictionary id 0, which
	// a frame does not spell out: the dictionary is always the one the schema says.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false), zstd.WithEncoderDictRaw(0, []byte{0}))
	if err != nil {
		panic(err) // the options are constant
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxLine))
	if err != nil {
		panic(err)
	}
	return &codec{enc: enc, dec: dec}
}

// encodeSnapshot returns line compressed with zstd against dict, valid until the next
// encodeSnapshot. It writes a stream rather than calling EncodeAll, which would load the
// dictionary's tables a second time: half the CPU.
func (c *codec) encodeSnapshot(line, dict []byte) []byte {
	c.out.Reset()
	if err := c.enc.ResetWithOptions(&c.out, zstd.WithEncoderDictRaw(0, dict)); err != nil {
		panic(err) // a dictionary under 2 GiB is always taken
	}
	c.enc.ResetContentSize(&c.out, int64(len(line)))
	if _, err := c.enc.Write(line); err != nil {
		panic(err) // a bytes.Buffer takes all
	}
	if err := c.enc.Close(); err != nil {
		panic(err)
	}
	return c.out.Bytes()
}

// decode appends to dst the line that data, compressed by encodeSnapshot against dict, holds.
func (c *codec) decodeSnapshot(dst, data, dict []byte) ([]byte, error) {
	if err := c.dec.ResetWithOptions(nil, zstd.WithDecoderDictRaw(0, dict)); err != nil {
		return dst, err
	}
	out, err := c.dec.DecodeAll(data, dst)
	if err != nil {
		return dst, fmt.Errorf("a stored version cannot be decompressed: %w", err)
	}
	return out, nil
}

// encodeChange returns line compressed with s2 against dict, valid until the next
// encodeChange.
func (c *codec) encodeChange(line, dict []byte) []byte {
	if d := s2.MakeDict(dict, nil); d != nil {
		c.change = d.Encode(c.change[:cap(c.change)], line)
	} else {
		c.change = s2.Encode(c.change[:cap(c.change)], line)
	}
	return c.change
}

// decodeChange appends to dst the line that data, compressed by encodeChange against
// dict, holds.
func (c *codec) decodeChange(dst, data, dict []byte) ([]byte, error) {
	n, err := s2.DecodedLen(data)
	if err != nil {
		return dst, fmt.Errorf("a stored version cannot be decompressed: %w", err)
	} else if n > maxLine {
		return dst, fmt.Errorf("a stored version cannot be decompressed: it says %d bytes", n)
	}
	out := slices.Grow(dst, n)
	into := out[len(out) : len(out)+n] // decoded in place, after dst
	if d := s2.MakeDict(dict, nil); d != nil {
		_, err = d.Decode(into, data)
	} else {
		_, err = s2.Decode(into, data)
	}
	if err != nil {
		return dst, fmt.Errorf("a stored version cannot be decompressed: %w", err)
	}
	return out[:len(out)+n], nil
}

// nextDict is the dictionary of the change that follows line, a snapshot or a change
// whose own base is prev: line, after prev when line is a change. Two versions back are
// most like the next in a churn that alternates (ready, not ready): 16% smaller changes
// on the status churn of bench-store. It appends to dst.
func nextDict(dst, prev, line []byte, snapshot bool) []byte {
	if !snapshot {
		dst = append(dst[:0], prev...)
	} else {
		dst = dst[:0]
	}
	return append(dst, line...)
}

func (c *codec) close() {
	c.enc.Close()
	c.dec.Close()
}
