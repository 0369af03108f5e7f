//go:build !unix

package listener

import (
	"context"
	"io"
)

// watchReaderGone is a no-op where pipes cannot be polled: a closed reader is noticed at
// the next write instead.
func watchReaderGone(context.Context, io.Writer, func()) {}
