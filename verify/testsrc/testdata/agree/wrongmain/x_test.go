// want: error
package wrongmain

func TestMain() {}
