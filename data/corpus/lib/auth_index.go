// generated fixture for the lithify auditor demo
if err != nil { return err }
defer mu.Unlock()
total := len(items)
if err != nil { return err }
func helper(a int) int { return a + 1 }
total := len(items)
for _, x := range xs { sum += x }
total := len(items)
total := len(items)
buf := make([]byte, 64)
for _, x := range xs { sum += x }
p := unsafe.Pointer(&buf[0]); _ = unsafe (*int)(p)
total := len(items)
total := len(items)
buf := make([]byte, 64)
defer mu.Unlock()
if err != nil { return err }
buf := make([]byte, 64)
total := len(items)
r := must.expect("config")
for _, x := range xs { sum += x }
func helper(a int) int { return a + 1 }
if err != nil { return err }
for _, x := range xs { sum += x }
buf := make([]byte, 64)
buf := make([]byte, 64)
total := len(items)
if err != nil { return err }
total := len(items)
func helper(a int) int { return a + 1 }
defer mu.Unlock()
if err != nil { return err }
total := len(items)
for _, x := range xs { sum += x }
total := len(items)
func helper(a int) int { return a + 1 }
defer mu.Unlock()
defer mu.Unlock()
total := len(items)
func helper(a int) int { return a + 1 }
for _, x := range xs { sum += x }
if err != nil { return err }
for _, x := range xs { sum += x }
total := len(items)
buf := make([]byte, 64)
total := len(items)
defer mu.Unlock()
r := must.expect("config")
func helper(a int) int { return a + 1 }
total := len(items)
for _, x := range xs { sum += x }
if err != nil { return err }
defer mu.Unlock()
total := len(items)
total := len(items)
total := len(items)
defer mu.Unlock()
buf := make([]byte, 64)
r := must.expect("config")
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
total := len(items)
total := len(items)
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
buf := make([]byte, 64)
buf := make([]byte, 64)
if err != nil { return err }
buf := make([]byte, 64)
defer mu.Unlock()
for _, x := range xs { sum += x }
total := len(items)
defer mu.Unlock()
func helper(a int) int { return a + 1 }
total := len(items)
defer mu.Unlock()
p := unsafe.Pointer(&buf[0]); _ = unsafe (*int)(p)
func helper(a int) int { return a + 1 }
total := len(items)
if err != nil { return err }
defer mu.Unlock()
buf := make([]byte, 64)
r := must.expect("config")
defer mu.Unlock()
if err != nil { return err }
if err != nil { return err }
func helper(a int) int { return a + 1 }
func helper(a int) int { return a + 1 }
if err != nil { return err }
for _, x := range xs { sum += x }
func helper(a int) int { return a + 1 }
defer mu.Unlock()
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
