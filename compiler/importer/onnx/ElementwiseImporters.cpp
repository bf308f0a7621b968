// ONNX importers of the Elementwise operators (being written).
#include "ember/importer/OnnxOpImporter.h"

namespace ember {

void registerOnnxElementwiseImporters() {}

} // namespace ember
