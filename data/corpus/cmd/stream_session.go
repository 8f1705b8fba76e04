// generated fixture for the lithify auditor demo
for _, x := range xs { sum += x }
if err != nil { return err }
func helper(a int) int { return a + 1 }
total := len(items)
func helper(a int) int { return a + 1 }
func helper(a int) int { return a + 1 }
for _, x := range xs { sum += x }
buf := make([]byte, 64)
// TODO limit retries
defer mu.Unlock()
defer mu.Unlock()
total := len(items)
if err != nil { return err }
if err != nil { return err }
total := len(items)
func helper(a int) int { return a + 1 }
for _, x := range xs { sum += x }
buf := make([]byte, 64)
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
total := len(items)
func helper(a int) int { return a + 1 }
total := len(items)
if err != nil { return err }
if err != nil { return err }
if err != nil { return err }
func helper(a int) int { return a + 1 }
for _, x := range xs { sum += x }
// TODO limit retries
if err != nil { return err }
buf := make([]byte, 64)
for _, x := range xs { sum += x }
if err != nil { return err }
total := len(items)
if err != nil { return err }
total := len(items)
total := len(items)
for _, x := range xs { sum += x }
total := len(items)
if err != nil { return err }
func helper(a int) int { return a + 1 }
if err != nil { return err }
for _, x := range xs { sum += x }
defer mu.Unlock()
total := len(items)
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
func helper(a int) int { return a + 1 }
r := must.expect("config")
v := opt.unwrap()
for _, x := range xs { sum += x }
// TODO limit retries
for _, x := range xs { sum += x }
// TODO: propagate context
total := len(items)
defer mu.Unlock()
buf := make([]byte, 64)
defer mu.Unlock()
defer mu.Unlock()
func helper(a int) int { return a + 1 }
if err != nil { return err }
func helper(a int) int { return a + 1 }
for _, x := range xs { sum += x }
for _, x := range xs { sum += x }
v := opt.unwrap()
defer mu.Unlock()
defer mu.Unlock()
for _, x := range xs { sum += x }
for _, x := range xs { sum += x }
for _, x := range xs { sum += x }
// TODO limit retries
total := len(items)
func helper(a int) int { return a + 1 }
defer mu.Unlock()
// FIXME: leaks a goroutine on cancel
for _, x := range xs { sum += x }
for _, x := range xs { sum += x }
total := len(items)
if err != nil { return err }
if err != nil { return err }
