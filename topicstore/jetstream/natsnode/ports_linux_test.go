package natsnode

import "testing"

// TestReservePortExclusive: a port reserved once is refused to a second
// reservation, of this process too (flock locks belong to the open file),
// so allocatePorts skips the ports of a cluster's nodes while they are down.
func TestReservePortExclusive(t *testing.T) {
	for port := 31999; port >= 20000; port-- {
		if !reservePort(port) {
			continue // held by another process's cluster
		}
		if reservePort(port) {
			t.Fatalf("port %d reserved twice", port)
		}
		return
	}
	t.Fatal("no port could be reserved")
}
