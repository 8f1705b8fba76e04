// generated fixture for the lithify auditor demo
func helper(a int) int { return a + 1 }
total := len(items)
if err != nil { return err }
func helper(a int) int { return a + 1 }
total := len(items)
for _, x := range xs { sum += x }
total := len(items)
if err != nil { return err }
if err != nil { return err }
if err != nil { return err }
buf := make([]byte, 64)
for _, x := range xs { sum += x }
if err != nil { return err }
if err != nil { return err }
buf := make([]byte, 64)
func helper(a int) int { return a + 1 }
for _, x := range xs { sum += x }
defer mu.Unlock()
total := len(items)
total := len(items)
for _, x := range xs { sum += x }
if err != nil { return err }
for _, x := range xs { sum += x }
defer mu.Unlock()
buf := make([]byte, 64)
total := len(items)
buf := make([]byte, 64)
v := opt.unwrap()
for _, x := range xs { sum += x }
v := opt.unwrap()
defer mu.Unlock()
if err != nil { return err }
buf := make([]byte, 64)
buf := make([]byte, 64)
buf := make([]byte, 64)
if err != nil { return err }
if err != nil { return err }
func helper(a int) int { return a + 1 }
func helper(a int) int { return a + 1 }
v := opt.unwrap()
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
buf := make([]byte, 64)
for _, x := range xs { sum += x }
total := len(items)
if err != nil { return err }
total := len(items)
func helper(a int) int { return a + 1 }
func helper(a int) int { return a + 1 }
buf := make([]byte, 64)
total := len(items)
for _, x := range xs { sum += x }
total := len(items)
if err != nil { return err }
defer mu.Unlock()
buf := make([]byte, 64)
func helper(a int) int { return a + 1 }
total := len(items)
for _, x := range xs { sum += x }
total := len(items)
for _, x := range xs { sum += x }
func helper(a int) int { return a + 1 }
defer mu.Unlock()
defer mu.Unlock()
total := len(items)
func helper(a int) int { return a + 1 }
for _, x := range xs { sum += x }
for _, x := range xs { sum += x }
defer mu.Unlock()
buf := make([]byte, 64)
func helper(a int) int { return a + 1 }
for _, x := range xs { sum += x }
buf := make([]byte, 64)
for _, x := range xs { sum += x }
buf := make([]byte, 64)
defer mu.Unlock()
buf := make([]byte, 64)
buf := make([]byte, 64)
buf := make([]byte, 64)
if err != nil { return err }
func helper(a int) int { return a + 1 }
if err != nil { return err }
if err != nil { return err }
func helper(a int) int { return a + 1 }
if err != nil { return err }
for _, x := range xs { sum += x }
func helper(a int) int { return a + 1 }
total := len(items)
func helper(a int) int { return a + 1 }
total := len(items)
buf := make([]byte, 64)
func helper(a int) int { return a + 1 }
func helper(a int) int { return a + 1 }
total := len(items)
for _, x := range xs { sum += x }
func helper(a int) int { return a + 1 }
for _, x := range xs { sum += x }
buf := make([]byte, 64)
buf := make([]byte, 64)
func helper(a int) int { return a + 1 }
defer mu.Unlock()
v := opt.unwrap()
buf := make([]byte, 64)
total := len(items)
total := len(items)
if err != nil { return err }
for _, x := range xs { sum += x }
total := len(items)
buf := make([]byte, 64)
if err != nil { return err }
defer mu.Unlock()
if err != nil { return err }
v := opt.unwrap()
defer mu.Unlock()
func helper(a int) int { return a + 1 }
if err != nil { return err }
for _, x := range xs { sum += x }
total := len(items)
total := len(items)
for _, x := range xs { sum += x }
if err != nil { return err }
buf := make([]byte, 64)
if err != nil { return err }
defer mu.Unlock()
func helper(a int) int { return a + 1 }
defer mu.Unlock()
for _, x := range xs { sum += x }
buf := make([]byte, 64)
if err != nil { return err }
defer mu.Unlock()
defer mu.Unlock()
buf := make([]byte, 64)
buf := make([]byte, 64)
defer mu.Unlock()
func helper(a int) int { return a + 1 }
if err != nil { return err }
buf := make([]byte, 64)
total := len(items)
buf := make([]byte, 64)
if err != nil { return err }
if err != nil { return err }
buf := make([]byte, 64)
if err != nil { return err }
total := len(items)
defer mu.Unlock()
total := len(items)
defer mu.Unlock()
defer mu.Unlock()
if err != nil { return err }
