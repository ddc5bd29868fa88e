package maintain

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"topicgate/topicstore"
)

// How durable the nodes are. A write the stream acknowledged is on a
// majority of its replicas, but nats-server writes it to disk only at
// its next sync, every two minutes unless the node is configured with
// sync_interval: always: a power loss of a majority of the nodes within
// that window loses acknowledged commits (Jepsen's analysis of NATS
// 2.12.1 found such losses under coordinated crashes). A killed process
// loses nothing, the kernel has the data. Whether the nodes sync every
// write is not something a client connection can ask (it is in the
// server's /varz, which the system account or the monitoring port
// serves), so a gateway given the nodes' monitoring endpoints
// (the store's Options.Monitor, --nats-monitor) reads their configuration at start
// and every durabilityEvery, logs a warning for each node that does not
// sync every write, and reports them all in ClusterStats (sys.cluster,
// /metrics). Without them it says once that it cannot tell.

// durabilityEvery is how often the nodes' configuration is read again (a
// node restarted with another configuration is noticed within it).
const durabilityEvery = time.Minute

// defaultSyncInterval is nats-server's sync interval when its
// configuration names none.
const defaultSyncInterval = 2 * time.Minute

// Durability reads the nodes' configuration, and keeps what the last
// reading found.
type Durability struct {
	monitor []string
	timeout time.Duration
	logger  *slog.Logger

	mu    sync.Mutex
	nodes []topicstore.NodeDurability
}

// NewDurability returns the check of the nodes whose monitoring endpoints
// are monitor, each asked within timeout, which warns on logger.
func NewDurability(monitor []string, timeout time.Duration, logger *slog.Logger) *Durability {
	return &Durability{monitor: monitor, timeout: timeout, logger: logger}
}

// varz is the part of nats-server's /varz answer read here.
type varz struct {
	ServerName string `json:"server_name"`
	JetStream  struct {
		Config struct {
			SyncInterval time.Duration `json:"sync_interval"`
			SyncAlways   bool          `json:"sync_always"`
		} `json:"config"`
	} `json:"jetstream"`
}

// readDurability reads the configuration of the node whose monitoring
// endpoint is base (http://host:port).
func readDurability(ctx context.Context, client *http.Client, base string) topicstore.NodeDurability {
	nd := topicstore.NodeDurability{Monitor: base}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/varz", nil)
	if err != nil {
		nd.Err = err.Error()
		return nd
	}
	resp, err := client.Do(req)
	if err != nil {
		nd.Err = err.Error()
		return nd
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		nd.Err = err.Error()
		return nd
	}
	if resp.StatusCode != http.StatusOK {
		nd.Err = fmt.Sprintf("%s/varz answered %s", base, resp.Status)
		return nd
	}
	var v varz
	if err := json.Unmarshal(body, &v); err != nil {
		nd.Err = fmt.Sprintf("%s/varz: %v", base, err)
		return nd
	}
	nd.Server, nd.Checked = v.ServerName, true
	nd.SyncAlways, nd.SyncInterval = v.JetStream.Config.SyncAlways, v.JetStream.Config.SyncInterval
	if nd.SyncInterval == 0 {
		nd.SyncInterval = defaultSyncInterval
	}
	return nd
}

// Check reads every node's configuration and logs what changed
// for the worse since the last reading: a node that does not sync every
// write, one that cannot be asked.
func (d *Durability) Check(ctx context.Context) {
	client := &http.Client{Timeout: d.timeout}
	nodes := make([]topicstore.NodeDurability, len(d.monitor))
	for i, base := range d.monitor {
		nodes[i] = readDurability(ctx, client, base)
	}
	d.mu.Lock()
	before := d.nodes
	d.nodes = nodes
	d.mu.Unlock()
	for i, nd := range nodes {
		var was topicstore.NodeDurability
		if i < len(before) {
			was = before[i]
		}
		switch {
		case nd.Err != "" && (was.Err == "" || len(before) == 0):
			d.logger.Warn("cannot read a NATS node's configuration: whether it syncs every write is unknown", "monitor", nd.Monitor, "err", nd.Err)
		case nd.Checked && !nd.SyncAlways && (was.SyncAlways || !was.Checked || was.SyncInterval != nd.SyncInterval):
			d.logger.Warn("a NATS node does not sync every write to disk: commits it acknowledged can be lost if a majority of the nodes lose power within its sync interval; configure it with jetstream { sync_interval: always } (docs/cluster/running.md)",
				"node", nd.Server, "monitor", nd.Monitor, "sync_interval", nd.SyncInterval)
		}
	}
}

// Run reads the nodes' configuration at once and every durabilityEvery
// until done is closed.
func (d *Durability) Run(done <-chan struct{}) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
		d.Check(ctx)
		cancel()
		t := time.NewTimer(durabilityEvery)
		select {
		case <-done:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Nodes is the last reading, for the store's ClusterStats.
func (d *Durability) Nodes() []topicstore.NodeDurability {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]topicstore.NodeDurability(nil), d.nodes...)
}
