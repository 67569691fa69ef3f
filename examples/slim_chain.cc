// A slimmable model run segment by segment at chosen widths (docs/slimmable.md):
// each segment is a Session, the output of one the input of the next.
//
//   slim_chain builtin:slim_resnet 0.5,0.25,0.25,1
#include <braid/slimmable.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string model_path = argc > 1 ? argv[1] : "builtin:slim_resnet";
  auto model = braid::SlimmableModel::Open(model_path);
  if (!model.ok()) {
    std::cerr << model.status().ToString() << "\n";
    return 2;
  }
  std::vector<double> widths((*model)->num_segments(), 1.0);
  if (argc > 2) {
    std::stringstream list(argv[2]);
    std::string item;
    for (size_t s = 0; s < widths.size() && std::getline(list, item, ','); ++s)
      widths[s] = std::strtod(item.c_str(), nullptr);
  }
  std::vector<float> image(3 * 32 * 32);
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<float>(i % 17) / 17.0f - 0.5f;
  braid::Tensor x = braid::Tensor::Borrow(braid::DataType::kF32, {1, 3, 32, 32}, image.data());

  // Sessions stay alive while their outputs are read by the next segment.
  std::vector<std::unique_ptr<braid::Session>> segments;
  for (int s = 0; s < (*model)->num_segments(); ++s) {
    const double input_width = s == 0 ? 1.0 : widths[s - 1];
    auto segment = (*model)->OpenSegment(s, widths[s], input_width);
    if (!segment.ok()) {
      std::cerr << segment.status().ToString() << "\n";
      return 2;
    }
    braid::Status status = (*segment)->SetInput((*segment)->inputs()[0].name, x);
    if (status.ok()) status = (*segment)->Run();
    auto y = (*segment)->GetOutput((*segment)->outputs()[0].name);
    if (!status.ok() || !y.ok()) {
      std::cerr << (status.ok() ? y.status() : status).ToString() << "\n";
      return 1;
    }
    std::cout << "segment " << s << " at width " << widths[s] << ": [";
    for (size_t d = 0; d < y->dims().size(); ++d) std::cout << (d ? "," : "") << y->dims()[d];
    std::cout << "]\n";
    x = *y;
    segments.push_back(std::move(*segment));
  }
  return 0;
}
