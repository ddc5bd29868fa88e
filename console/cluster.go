package console

import (
	"context"
	"net/http"
)

// clusterSQL is sys.cluster: empty on the embedded store.
const clusterSQL = `SELECT kind, name, role, alive, lag, sequence, detail FROM sys.cluster`

// clusterPage is the cluster template's data.
type clusterPage struct {
	Cluster *result
	// LiveURL and BytesURL are the throughput charts' streams: messages
	// and bytes per second.
	LiveURL, BytesURL string
}

// cluster is the Cluster page: sys.cluster's rows (or that the store is
// the embedded one, one process) and the throughput of the topics the
// role may see over the last hour, live.
func (c *Console) cluster(w http.ResponseWriter, r *http.Request) {
	c.withSQL(w, r, func(ctx context.Context, sc *sqlConn) error {
		res, err := sc.query(ctx, clusterSQL)
		if err != nil {
			return err
		}
		c.show(w, r, http.StatusOK, "cluster", "Cluster", &clusterPage{Cluster: res, LiveURL: "/live?chart=throughput",
			BytesURL: "/live?chart=bytes"})
		return nil
	})
}
