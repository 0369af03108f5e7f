package quietio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// listen starts a TCP listener on 127.0.0.1 whose accepted connections are handed to serve.
func listen(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return l.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The package's invariant: Go's dialer hands out non-blocking sockets, so Dial wraps them.
// If this fails, Dial has silently stopped taking the fast path on this platform.
func TestDialedSocketIsNonBlocking(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the raw reads and writes are Linux only")
	}
	addr := listen(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	if _, ok := dial(t, addr).(*conn); !ok {
		t.Fatal("Dial returned the plain connection: the dialled socket is not non-blocking, or not TCP")
	}
}

// A large write fills the socket's buffers (EAGAIN, a wait in the poller) while the peer
// echoes it back slowly: every byte arrives, in order.
func TestLargeWriteAndReadArriveWhole(t *testing.T) {
	addr := listen(t, func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, 1500)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				time.Sleep(10 * time.Microsecond)
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
	c := dial(t, addr)
	want := make([]byte, 8<<20)
	for i := range want {
		want[i] = byte(i * 7 % 251)
	}
	errc := make(chan error, 1)
	go func() {
		n, err := c.Write(want)
		if err == nil && n != len(want) {
			err = io.ErrShortWrite
		}
		errc <- err
	}()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading the echo: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("writing: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the echoed bytes differ from the written ones")
	}
}

// Deadlines, Close and the peer's close end a Read as they do net's own connections.
func TestReadEndsAsNetDoes(t *testing.T) {
	closePeer := make(chan struct{})
	addr := listen(t, func(c net.Conn) {
		c.Write([]byte("hi"))
		<-closePeer
		c.Close()
	})
	c := dial(t, addr)
	buf := make([]byte, 16)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "hi" {
		t.Fatalf("Read = %q, %v; want \"hi\"", buf[:n], err)
	}

	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.Read(buf)
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read past its deadline = %v; want a timeout (os.ErrDeadlineExceeded)", err)
	}
	c.SetReadDeadline(time.Time{})

	close(closePeer)
	if _, err := c.Read(buf); err != io.EOF {
		t.Fatalf("Read after the peer closed = %v; want io.EOF", err)
	}

	c2 := dial(t, listen(t, func(c net.Conn) { time.Sleep(time.Second); c.Close() }))
	go func() { time.Sleep(20 * time.Millisecond); c2.Close() }()
	if _, err := c2.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read when closed = %v; want net.ErrClosed", err)
	}
	if _, err := c2.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write when closed = %v; want net.ErrClosed", err)
	}
}
