package store

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// codec compresses each version's line with zstd, with another line as the dictionary
// (zstd's "patch from" use of a raw dictionary): a change is compressed against the
// object's previous version (and the one before, nextDict), so that it costs what changed; a snapshot against its
// resource's reference line (resources.dict), so that it costs what differs from
// another object of its kind. Measured on a status churn of realistic pods
// (bench/README.md): 5 KB lines become about 270 bytes as changes, 300 as snapshots,
// where zstd alone makes 1,500. The fastest level: the better ones cost 5 to 20 times
// the CPU for 5 to 15% less.
//
// A codec is used by one goroutine at a time.
type codec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
	out bytes.Buffer
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

// encode returns line compressed against dict, valid until the next encode. It writes
// a stream rather than calling EncodeAll, which would load the dictionary's tables a
// second time: half the CPU.
func (c *codec) encode(line, dict []byte) []byte {
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

// decode appends to dst the line that data, compressed against dict, holds.
func (c *codec) decode(dst, data, dict []byte) ([]byte, error) {
	if err := c.dec.ResetWithOptions(nil, zstd.WithDecoderDictRaw(0, dict)); err != nil {
		return dst, err
	}
	out, err := c.dec.DecodeAll(data, dst)
	if err != nil {
		return dst, fmt.Errorf("a stored version cannot be decompressed: %w", err)
	}
	return out, nil
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
