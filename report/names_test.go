package report

import (
	"strings"
	"testing"
)

func TestElideTemplates(t *testing.T) {
	long := "c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::WrapFunctionIntoFunctor_<c10::CompileTimeFunctionPointer<at::Tensor (c10::DispatchKeySet, at::Tensor const&), &torch::autograd::VariableType::(anonymous namespace)::sum>, at::Tensor, c10::guts::typelist::typelist<c10::DispatchKeySet, at::Tensor const&> >, at::Tensor (c10::DispatchKeySet, at::Tensor const&)>::call"
	for _, c := range []struct{ in, want string }{
		{long, "c10::impl::wrap_kernel_functor_unboxed_<…>::call"},
		// Short lists say something: kept.
		{"torch::autograd::TypeError_to_NotImplemented_<&torch::autograd::THPVariable_mul>",
			"torch::autograd::TypeError_to_NotImplemented_<&torch::autograd::THPVariable_mul>"},
		{"std::vector<int>::push_back", "std::vector<int>::push_back"},
		// Each outermost list on its own.
		{"a<int>::b<" + strings.Repeat("x", 50) + ">::c", "a<int>::b<…>::c"},
		{"ns::Matrix<float, 4, 4>::operator<<", "ns::Matrix<float, 4, 4>::operator<<"},
		{"ns::Very_long_class_name_for_test<std::map<std::string, std::vector<std::pair<int, int> > > >::operator->",
			"ns::Very_long_class_name_for_test<…>::operator->"},
		{"ns::Very_long_class_name_for_test<std::map<std::string, std::vector<int> > >::operator<=",
			"ns::Very_long_class_name_for_test<…>::operator<="},
		// Unbalanced: unchanged.
		{"broken<std::map<std::string, std::vector<std::pair<int, int> > >::name", "broken<std::map<std::string, std::vector<std::pair<int, int> > >::name"},
		{"py::main", "py::main"},
	} {
		if got := elideTemplates(c.in); got != c.want {
			t.Errorf("elideTemplates(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
