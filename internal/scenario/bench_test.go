package scenario

import (
	"strconv"
	"testing"

	"github.com/showdownlab/showdown/load"
)

// BenchmarkBankIteration measures one iteration of the bank rematch
// scenario (7 steps: Request then Check each) against canned responses:
// the scenario's own cost per virtual-user iteration, without the network.
func BenchmarkBankIteration(b *testing.B) {
	b.Run("same ids", func(b *testing.B) { benchBank(b, false) })
	// New ids every iteration, as against a real bank: the URLs that hold
	// them change, and each changed URL is a new string.
	b.Run("new ids", func(b *testing.B) { benchBank(b, true) })
}

func benchBank(b *testing.B, newIDs bool) {
	sc := loadBank(&testing.T{}, "scenario.yaml", "http://127.0.0.1:8080")
	resps := []*load.Response{
		{Status: 200, RawHeader: []byte("Content-Type: application/json\r\n"), Body: []byte(`{"id":1041,"balance":400}`)},
		{Status: 200, RawHeader: []byte("Content-Type: application/json\r\n"), Body: []byte(`{"id":1042,"balance":300}`)},
		{Status: 200, Body: []byte(`{"balance":400}`)},
		{Status: 200, Body: []byte(`{"balance":300}`)},
		{Status: 200, Body: []byte(`{"id":77,"from_client_id":1041,"to_client_id":1042,"amount":10}`)},
		{Status: 200, Body: []byte(`{"balance":390}`)},
		{Status: 200, Body: []byte(`{"balance":310}`)},
	}
	u := sc.NewUser(1)
	var req load.Request
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for step := range resps {
			if newIDs && step < 2 {
				body := resps[step].Body[:0]
				body = append(body, `{"id":`...)
				body = strconv.AppendInt(body, int64(2*i+step), 10)
				resps[step].Body = append(body, `,"balance":400}`...)
			}
			req.Reset()
			if err := u.Request(i, step, &req); err != nil {
				b.Fatal(err)
			}
			if err := u.Check(i, step, resps[step]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSkuIteration measures one iteration of the sku scenario: a URL
// picked from ten ids, and an assertion that compares with the pick.
func BenchmarkSkuIteration(b *testing.B) {
	ids := []string{"11", "22", "33", "44", "55", "66", "77", "88", "99", "110"}
	sc, err := Load("../../workloads/sku/scenario.yaml", Options{BaseURL: "http://127.0.0.1:8080", Lists: map[string][]string{"sku_ids": ids}})
	if err != nil {
		b.Fatal(err)
	}
	bodies := map[string][]byte{}
	for _, id := range ids {
		bodies["http://127.0.0.1:8080/sku/"+id] = []byte(`{"id":1,"mem_id":2,"mem_code":"m","sku_id":` + id + `,"sku_code":"c","item":"i","sku_name":"n","sku_abbr":"a"}`)
	}
	u := sc.NewUser(1)
	var req load.Request
	resp := &load.Response{Status: 200}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		req.Reset()
		if err := u.Request(i, 0, &req); err != nil {
			b.Fatal(err)
		}
		resp.Body = bodies[req.URL]
		if err := u.Check(i, 0, resp); err != nil {
			b.Fatal(err)
		}
	}
}
