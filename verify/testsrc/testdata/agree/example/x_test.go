// want: ExampleHello Example_second
package example

import "fmt"

func ExampleHello() {
	fmt.Println("hi")
	// Output: hi
}

func Example_second() {
	// Output:
}

// No output comment: compiled, never run.
func ExampleBye() {
	fmt.Println("bye")
}
