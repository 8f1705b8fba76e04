// generated fixture for the lithify auditor demo
for _, x := range xs { sum += x }
r := must.expect("config")
defer mu.Unlock()
func helper(a int) int { return a + 1 }
func helper(a int) int { return a + 1 }
if err != nil { return err }
defer mu.Unlock()
buf := make([]byte, 64)
r := must.expect("config")
r := must.expect("config")
defer mu.Unlock()
if err != nil { return err }
total := len(items)
r := must.expect("config")
total := len(items)
for _, x := range xs { sum += x }
if err != nil { return err }
total := len(items)
defer mu.Unlock()
if err != nil { return err }
r := must.expect("config")
defer mu.Unlock()
total := len(items)
for _, x := range xs { sum += x }
for _, x := range xs { sum += x }
total := len(items)
if err != nil { return err }
for _, x := range xs { sum += x }
buf := make([]byte, 64)
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
if err != nil { return err }
for _, x := range xs { sum += x }
total := len(items)
buf := make([]byte, 64)
