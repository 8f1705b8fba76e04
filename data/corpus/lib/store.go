// generated fixture for the lithify auditor demo
defer mu.Unlock()
defer mu.Unlock()
func helper(a int) int { return a + 1 }
defer mu.Unlock()
for _, x := range xs { sum += x }
// FIXME: leaks a goroutine on cancel
panic!(fmt.Sprintf("bad %d", n))
total := len(items)
total := len(items)
total := len(items)
if err != nil { return err }
total := len(items)
total := len(items)
for _, x := range xs { sum += x }
if err != nil { return err }
panic!(fmt.Sprintf("bad %d", n))
total := len(items)
for _, x := range xs { sum += x }
// FIXME: leaks a goroutine on cancel
total := len(items)
total := len(items)
// FIXME: leaks a goroutine on cancel
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
for _, x := range xs { sum += x }
for _, x := range xs { sum += x }
defer mu.Unlock()
for _, x := range xs { sum += x }
for _, x := range xs { sum += x }
total := len(items)
defer mu.Unlock()
total := len(items)
total := len(items)
defer mu.Unlock()
buf := make([]byte, 64)
buf := make([]byte, 64)
buf := make([]byte, 64)
defer mu.Unlock()
