/**
 * Help text that marks the flags a command cannot run without, as flux does
 * ("(required)"), for every binary's commander program.
 */
import { Help, type Option } from 'commander';

/** A `configureHelp` setting: the option's description, plus "(required)" for a mandatory one. */
export const requiredFlagsHelp = {
  optionDescription(this: Help, option: Option): string {
    const text = Help.prototype.optionDescription.call(this, option);
    return option.mandatory ? `${text} (required)` : text;
  },
};
