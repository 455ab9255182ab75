#pragma once
// Temporary scalar stats kernel (replaced by the vectorized one on branch i22-cpu).
