// generated fixture for the lithify auditor demo
defer mu.Unlock()
if err != nil { return err }
defer mu.Unlock()
defer mu.Unlock()
buf := make([]byte, 64)
buf := make([]byte, 64)
total := len(items)
total := len(items)
defer mu.Unlock()
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
for _, x := range xs { sum += x }
func helper(a int) int { return a + 1 }
if err != nil { return err }
func helper(a int) int { return a + 1 }
total := len(items)
func helper(a int) int { return a + 1 }
if err != nil { return err }
for _, x := range xs { sum += x }
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
defer mu.Unlock()
defer mu.Unlock()
total := len(items)
func helper(a int) int { return a + 1 }
for _, x := range xs { sum += x }
for _, x := range xs { sum += x }
func helper(a int) int { return a + 1 }
func helper(a int) int { return a + 1 }
defer mu.Unlock()
if err != nil { return err }
for _, x := range xs { sum += x }
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
defer mu.Unlock()
for _, x := range xs { sum += x }
for _, x := range xs { sum += x }
if err != nil { return err }
total := len(items)
if err != nil { return err }
defer mu.Unlock()
total := len(items)
func helper(a int) int { return a + 1 }
if err != nil { return err }
if err != nil { return err }
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
total := len(items)
defer mu.Unlock()
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
if err != nil { return err }
for _, x := range xs { sum += x }
buf := make([]byte, 64)
if err != nil { return err }
for _, x := range xs { sum += x }
for _, x := range xs { sum += x }
for _, x := range xs { sum += x }
if err != nil { return err }
func helper(a int) int { return a + 1 }
defer mu.Unlock()
if err != nil { return err }
