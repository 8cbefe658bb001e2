package fuzz

import "testing"

func BenchmarkRPCRaw(b *testing.B) {
	for _, tc := range []struct {
		name  string
		seeds string
		check func([]byte) *Failure
	}{{"acp", RawACP, CheckACP}, {"appserver", RawAppServer, CheckAppServer}, {"message", RawRPCMessage, CheckRPCMessage}} {
		seeds := RawSeeds(tc.seeds)
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if f := tc.check(seeds[i%len(seeds)]); f != nil {
					b.Fatal(f)
				}
			}
		})
	}
}
