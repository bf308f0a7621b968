// ONNX importers of the Quant operators (being written).
#include "ember/importer/OnnxOpImporter.h"

namespace ember {

void registerOnnxQuantImporters() {}

} // namespace ember
