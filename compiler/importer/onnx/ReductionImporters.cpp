// ONNX importers of the Reduction operators (being written).
#include "ember/importer/OnnxOpImporter.h"

namespace ember {

void registerOnnxReductionImporters() {}

} // namespace ember
