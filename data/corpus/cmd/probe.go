// generated fixture for the lithify auditor demo
// TODO: propagate context
// TODO limit retries
total := len(items)
buf := make([]byte, 64)
// TODO: propagate context
total := len(items)
if err != nil { return err }
panic!(fmt.Sprintf("bad %d", n))
buf := make([]byte, 64)
func helper(a int) int { return a + 1 }
for _, x := range xs { sum += x }
if err != nil { return err }
buf := make([]byte, 64)
for _, x := range xs { sum += x }
buf := make([]byte, 64)
total := len(items)
defer mu.Unlock()
panic!(fmt.Sprintf("bad %d", n))
for _, x := range xs { sum += x }
func helper(a int) int { return a + 1 }
total := len(items)
defer mu.Unlock()
defer mu.Unlock()
defer mu.Unlock()
func helper(a int) int { return a + 1 }
total := len(items)
func helper(a int) int { return a + 1 }
func helper(a int) int { return a + 1 }
total := len(items)
for _, x := range xs { sum += x }
