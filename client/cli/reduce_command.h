#pragma once

namespace gpureduce::cli {

// gpureduce reduce [flags] [FILE|-]
int RunReduce(int argc, char** argv);

}  // namespace gpureduce::cli
