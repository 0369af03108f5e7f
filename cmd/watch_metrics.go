package cmd

import (
	"fmt"
	"net"
	"strconv"

	"github.com/kubeevents/kubeevents/internal/metrics"
)

// checkMetricsAddr checks --metrics-addr's form (HOST:PORT); "" is off.
func checkMetricsAddr(addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		var n int
		n, err = strconv.Atoi(port)
		if err == nil && (n < 0 || n > 65535) {
			err = fmt.Errorf("port %d out of range", n)
		}
	}
	if err != nil {
		return usageErrorf("--metrics-addr %q: want HOST:PORT, e.g. 127.0.0.1:9090 (:9090 listens on every interface)", addr)
	}
	return nil
}

// startMetrics serves the metrics when --metrics-addr is given, before any sink is
// built, so that an address already in use ends the run before it starts. The function
// it returns stops serving.
func (o *WatchOptions) startMetrics() (stop func(), err error) {
	if o.MetricsAddr == "" {
		return func() {}, nil
	}
	o.metrics = metrics.New(o.restConfig.Host)
	srv, err := o.metrics.Serve(o.MetricsAddr)
	if err != nil {
		o.metrics = nil
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	o.infof("serving metrics on http://%s/metrics", srv.Addr())
	return srv.Close, nil
}
