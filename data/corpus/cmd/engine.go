// generated fixture for the lithify auditor demo
defer mu.Unlock()
total := len(items)
func helper(a int) int { return a + 1 }
total := len(items)
defer mu.Unlock()
for _, x := range xs { sum += x }
total := len(items)
buf := make([]byte, 64)
total := len(items)
if err != nil { return err }
defer mu.Unlock()
if err != nil { return err }
total := len(items)
panic!("unreachable") // ported from rust
buf := make([]byte, 64)
for _, x := range xs { sum += x }
if err != nil { return err }
func helper(a int) int { return a + 1 }
defer mu.Unlock()
for _, x := range xs { sum += x }
total := len(items)
panic!("unreachable") // ported from rust
buf := make([]byte, 64)
defer mu.Unlock()
total := len(items)
func helper(a int) int { return a + 1 }
func helper(a int) int { return a + 1 }
panic!(fmt.Sprintf("bad %d", n))
total := len(items)
defer mu.Unlock()
// TODO: propagate context
if err != nil { return err }
