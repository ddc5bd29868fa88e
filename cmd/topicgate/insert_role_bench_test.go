package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
)

// BenchmarkInsertOneAs measures one connection's autocommit INSERTs as
// the bootstrap superuser and as a plain role that owns the topic (what
// docs/performance/ab-grants.sh compares), to see what the privilege
// checks add to a statement; use it with -cpuprofile.
func BenchmarkInsertOneAs(b *testing.B) {
	for _, role := range []string{"", "writer"} {
		name := "superuser"
		if role != "" {
			name = role
		}
		b.Run(name, func(b *testing.B) {
			a := startTestServer(b)
			ctx := context.Background()
			admin := connect(b, a)
			c := admin
			if role != "" {
				exec(b, admin, "CREATE ROLE "+role+" LOGIN")
				exec(b, admin, "GRANT CREATE ON SCHEMA public TO "+role)
				var err error
				c, err = pgx.Connect(ctx, fmt.Sprintf("postgres://%s@%s/postgres?sslmode=disable", role, a.Addr()))
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close(ctx)
			}
			exec(b, c, "CREATE TOPIC bench_log WITH (min_active_partitions = 4)")
			payload := make([]byte, 100)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.Exec(ctx, "INSERT INTO bench_log (data) VALUES ($1)", payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
